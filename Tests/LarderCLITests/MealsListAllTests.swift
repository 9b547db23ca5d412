import LarderAPI
import LarderCLI
import LarderWire
import Testing

/// `larder meals list --all` against servers whose pages never end: a token sent again stops it
/// with an error, `-o ids` prints page by page, and what a table or JSON holds is bounded.
@Suite("meals list --all")
struct MealsListAllTests {
    /// Past this many pages the fake server refuses: without the checks under test the CLI
    /// would ask for ever, and this makes it fail at once instead.
    static let pageLimit = 40

    /// A server whose page after `page_token` t holds one meal and next_page_token `next[t]`.
    static func answer(_ next: [String: String], name: String = "n") -> @Sendable (Int, RequestEnvelope) -> ResponseEnvelope {
        { count, request in
            guard count <= pageLimit else {
                return ResponseEnvelope(callID: request.callID, error: .failedPrecondition("test: page \(count) asked for"))
            }
            let token = (try? ProtoCodec.decode(ListMealRecordsRequest.self, from: request.payload).pageToken) ?? "?"
            let page = ListMealRecordsResponse(mealRecords: [MealRecord(id: "after-" + token, name: name)],
                                               nextPageToken: next[token] ?? "")
            return ResponseEnvelope(callID: request.callID, payload: ProtoCodec.encode(page))
        }
    }

    @Test("a server that sends the same page token again: INTERNAL naming it, nothing on stdout", arguments: [
        (["": "again", "again": "again"], 2, "again"),
        (["": "a", "a": "b", "b": "c", "c": "a"], 4, "a"),
    ])
    func repeatedToken(next: [String: String], pages: Int, token: String) async throws {
        for output in [[], ["--json"]] {
            let server = try FakeServer()
            let result = try await CLIRunner.run(output + ["meals", "list", "--all"], server: server,
                                                 answering: Self.answer(next))
            #expect(result.status == ExitCode.forStatus(.internal), "\(result.stderr)")
            #expect(result.stdout == "")
            #expect(result.stderr == "INTERNAL: meals list --all: page \(pages) from the server has next_page_token "
                    + "\"\(token)\", which an earlier page of this listing had; following it would repeat pages for "
                    + "ever, so larder stopped\n")
        }
    }

    @Test("-o ids prints each page's ids as it comes, then stops at a repeated token")
    func idsStream() async throws {
        let server = try FakeServer()
        let result = try await CLIRunner.run(["-o", "ids", "meals", "list", "--all"], server: server,
                                             answering: Self.answer(["": "t", "t": "t"]))
        #expect(result.status == ExitCode.forStatus(.internal))
        #expect(result.stdout == "after-\nafter-t\n")
        #expect(result.stderr.hasPrefix("INTERNAL: meals list --all: page 2 from the server has next_page_token \"t\""))

        let ending = try FakeServer()
        let all = try await CLIRunner.run(["-o", "ids", "meals", "list", "--all"], server: ending,
                                          answering: Self.answer(["": "p2", "p2": "p3"]))
        #expect(all.status == 0 && all.stderr == "", "\(all.stderr)")
        #expect(all.stdout == "after-\nafter-p2\nafter-p3\n")
    }

    @Test("a table or JSON of --all holds at most 64 MiB of meals: RESOURCE_EXHAUSTED past it")
    func heldBound() async throws {
        var next: [String: String] = ["": "p1"]
        for page in 1..<Self.pageLimit { next["p\(page)"] = "p\(page + 1)" }
        let server = try FakeServer()
        // 3 MiB a page: the 22nd page goes past 64 MiB.
        let result = try await CLIRunner.run(["meals", "list", "--all"], server: server,
                                             answering: Self.answer(next, name: String(repeating: "n", count: 3 << 20)))
        #expect(result.status == ExitCode.forStatus(.resourceExhausted), "\(result.stderr.prefix(300))")
        #expect(result.stdout == "")
        #expect(result.stderr == "RESOURCE_EXHAUSTED: meals list --all: more than 64 MiB of meals after 22 pages, too "
                + "many to hold for a table or JSON; -o ids prints them page by page, or narrow the listing with "
                + "--since, --until or --category\n")
    }
}
