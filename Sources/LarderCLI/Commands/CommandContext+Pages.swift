import LarderAPI
import LarderWire

extension CommandContext {
    /// Rows asked for on each page of a list the CLI shows whole: the most a server sends.
    static let listPageSize: Int32 = 1000

    /// Every location, page after page, as one response.
    func allLocations() async throws(CLIError) -> ListLocationsResponse {
        try await everyPage(LocationMethods.listLocations, ListLocationsRequest(),
                            pageSize: \.pageSize, pageToken: \.pageToken, nextPageToken: \.nextPageToken) {
            $0.locations += $1.locations
        }
    }

    /// Every category group, page after page, as one response.
    func allCategoryGroups() async throws(CLIError) -> ListCategoryGroupsResponse {
        try await everyPage(CategoryGroupMethods.listCategoryGroups, ListCategoryGroupsRequest(),
                            pageSize: \.pageSize, pageToken: \.pageToken, nextPageToken: \.nextPageToken) {
            $0.categoryGroups += $1.categoryGroups
        }
    }

    /// The name of group `id` for a table (as `categories list` shows groups); nil in JSON and
    /// ids output, or when the group cannot be read (the id is shown then).
    func groupNameForTable(_ id: String) async -> String? {
        guard globals.output == .table, !id.isEmpty else { return nil }
        return try? await call(CategoryGroupMethods.getCategoryGroup, GetCategoryGroupRequest(id: id)).name
    }

    /// Every item category of group `groupID` (of all groups when empty), page after page, as one response.
    func allItemCategories(groupID: String = "") async throws(CLIError) -> ListItemCategoriesResponse {
        try await everyPage(ItemCategoryMethods.listItemCategories, ListItemCategoriesRequest(categoryGroupID: groupID),
                            pageSize: \.pageSize, pageToken: \.pageToken, nextPageToken: \.nextPageToken) {
            $0.itemCategories += $1.itemCategories
        }
    }

    /// Calls a paged list method with `listPageSize` until the server gives no next token (or
    /// repeats one), appending each page's rows to the first page's response with `append`.
    /// A server without paging ignores the page size and answers with every row at once.
    private func everyPage<Req: ProtoMessage, Resp: ProtoMessage>(_ method: RPCMethod<Req, Resp>, _ request: Req,
                                      pageSize: WritableKeyPath<Req, Int32>, pageToken: WritableKeyPath<Req, String>,
                                      nextPageToken: WritableKeyPath<Resp, String>,
                                      append: (inout Resp, Resp) -> Void) async throws(CLIError) -> Resp {
        var request = request
        request[keyPath: pageSize] = Self.listPageSize
        var all = try await call(method, request)
        var tokensSeen: Set<String> = []
        while case let token = all[keyPath: nextPageToken], !token.isEmpty, tokensSeen.insert(token).inserted {
            request[keyPath: pageToken] = token
            let page = try await call(method, request)
            append(&all, page)
            all[keyPath: nextPageToken] = page[keyPath: nextPageToken]
        }
        all[keyPath: nextPageToken] = ""
        return all
    }
}
