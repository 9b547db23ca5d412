import Foundation
import LarderAPI
import LarderWire

/// `larder meals list|get|add|update|delete|summary`.
enum MealCommands {
    static let resource = ResourceSpec(
        name: "meals", summary: "Meal records and daily calorie summaries",
        commands: [list, get, add, update, delete, summary])

    /// Pages fetched by `--all` at most (at 1000 meals a page).
    static let maxPages = 10_000
    /// What `--all` holds for a table or JSON, in UTF-8 bytes of ids and names plus 64 a meal
    /// (about 250,000 meals with 150-byte names); `-o ids` prints page by page and holds one.
    static let maxHeldBytes = 64 << 20

    static let list = CommandSpec(
        resource: "meals", name: "list", summary: "List meals, newest first, one page at a time",
        options: [
            OptionSpec("since", value: "TIME", "Only meals eaten at or after TIME (RFC 3339, or YYYY-MM-DD = local midnight)"),
            OptionSpec("until", value: "TIME", "Only meals eaten before TIME"),
            OptionSpec("category", value: "CATEGORY", "Only this category: \(MealCategoryNames.choices)",
                       choices: MealCategoryNames.all),
            OptionSpec("page-size", value: "N", "Meals per page, 1-1000 (server default 50)"),
            OptionSpec("page-token", value: "TOKEN", "Continue after the page that returned TOKEN"),
            .flag("all", "Fetch every page, at most \(maxPages) (more, or a page token the server sends twice, is an error); "
                  + "-o ids prints each page as it comes, a table or JSON holds at most \(maxHeldBytes >> 20) MiB of meals"),
        ],
        examples: [
            "larder meals list --since 2026-11-01 --until 2026-12-01 --category lunch --page-size 100",
            "larder meals list --all --json",
        ],
        fieldFlags: ["page_size": "--page-size", "page_token": "--page-token", "start_time": "--since",
                     "end_time": "--until", "category": "--category"]
    ) { command, context throws(CLIError) in
        let request = ListMealRecordsRequest(
            pageSize: try command.int32("page-size", in: 1...1000) ?? 0,
            pageToken: command.value("page-token") ?? "",
            startTime: try command.timestamp("since", context.localTime),
            endTime: try command.timestamp("until", context.localTime),
            category: try command.mealCategory("category") ?? .unspecified)
        guard !command.isSet("all") || command.value("page-token") == nil else {
            throw .usage("--all and --page-token cannot be combined", command.spec)
        }
        let all = command.isSet("all")
        let response: ListMealRecordsResponse
        do throws(CLIError) {
            response = all ? try await listAll(request, context)
                : try await context.call(MealRecordMethods.listMealRecords, request)
        } catch {
            throw withDateHint(error, command)
        }
        // `--all -o ids` printed its ids page by page.
        if !all || context.globals.output != .ids {
            try context.emit(response, ids: { response.mealRecords.map(\.id) }) {
                HumanOutput.mealRecords(response.mealRecords, context.localTime, width: context.tableWidth)
            }
        }
        let token = response.nextPageToken
        guard !token.isEmpty else { return }
        let shown = token.utf8.count <= maxShownTokenBytes ? "--page-token \(TerminalText.value(token))" : nil
        if all {
            // What was fetched is printed; the listing is not complete, and a script must know it.
            let resume = shown ?? "a page token of \(token.utf8.count) bytes (too long to show)"
            throw .rpc(RPCError(.resourceExhausted, "meals list --all stopped after \(maxPages) pages with more to come; "
                + "narrow the listing with --since, --until or --category (the server offered \(resume))"))
        }
        context.hint(shown.map { "next page: add \($0) (or --all for every page)" }
            ?? "next page: the server's page token is \(token.utf8.count) bytes, too long to show; use --all for every page")
    }

    /// `error` noting, when the server refused a page token for other filters, that a date-only
    /// `--since`/`--until` is local midnight: the same text in another zone (TZ) is another filter.
    static func withDateHint(_ error: CLIError, _ command: ParsedCommand) -> CLIError {
        guard case .rpc(let rpc) = error, rpc.code == .invalidArgument,
              rpc.message.hasPrefix("--page-token was issued for other filters"),
              ["since", "until"].contains(where: { command.value($0).flatMap(CivilDate.init(parsing:)) != nil })
        else { return error }
        return .rpc(RPCError(rpc.code, rpc.message + " (a date YYYY-MM-DD is midnight in this machine's time zone: "
            + "give the same TZ, or RFC 3339 times, as for the first page)"))
    }

    /// The longest page token a hint shows (a Larder server's are ~50 bytes).
    static let maxShownTokenBytes = 1024

    /// Every page of the listing `first` asks for, until one without a next_page_token or `maxPages`: with
    /// `-o ids` the ids are printed page by page and the result holds the last page's token
    /// only; otherwise the result holds every meal.
    /// - Throws: `.rpc(INTERNAL)` when the server sends a page token it already sent in this
    ///   listing; `.rpc(RESOURCE_EXHAUSTED)` past `maxHeldBytes`; errors of the calls.
    static func listAll(_ first: ListMealRecordsRequest, _ context: CommandContext)
        async throws(CLIError) -> ListMealRecordsResponse
    {
        var request = first
        let streams = context.globals.output == .ids
        var meals: [MealRecord] = []
        var held = 0
        var tokens = PageTokenTrail()
        var pages = 0
        while true {
            let response = try await context.call(MealRecordMethods.listMealRecords, request)
            pages += 1
            if streams {
                context.writeIDs(response.mealRecords.map(\.id))
            } else {
                held += response.mealRecords.reduce(0) { $0 + $1.id.utf8.count + $1.name.utf8.count + 64 }
                guard held <= maxHeldBytes else {
                    throw .rpc(RPCError(.resourceExhausted, "meals list --all: more than \(maxHeldBytes >> 20) MiB of "
                        + "meals after \(pages) pages, too many to hold for a table or JSON; -o ids prints them page "
                        + "by page, or narrow the listing with --since, --until or --category"))
                }
                meals += response.mealRecords
            }
            let token = response.nextPageToken
            guard !token.isEmpty, pages < maxPages else {
                return ListMealRecordsResponse(mealRecords: meals, nextPageToken: token)
            }
            guard tokens.insert(token) else {
                throw .rpc(RPCError(.internal, "meals list --all: page \(pages) from the server has next_page_token "
                    + "\(SafeText.quoted(token)), which an earlier page of this listing had; following it would "
                    + "repeat pages for ever, so larder stopped"))
            }
            request.pageToken = token
        }
    }

    static let get = CommandSpec(
        resource: "meals", name: "get",
        summary: "Show one meal (ID: an id, or a prefix of 8+ characters of one of the 10000 newest)",
        positionals: ["ID"],
        examples: ["larder meals get ID", "larder meals get 6f1c2d9e"],
        fieldFlags: ["id": "ID"]
    ) { command, context throws(CLIError) in
        let id = try await context.mealID(command.id)
        let meal = try await context.call(MealRecordMethods.getMealRecord, GetMealRecordRequest(id: id))
        try context.emit(meal, ids: { [meal.id] }) { HumanOutput.mealRecord(meal, context.localTime) }
    }

    static let add = CommandSpec(
        resource: "meals", name: "add", summary: "Record a meal",
        options: [
            OptionSpec("name", value: "NAME", "What was eaten", required: true),
            OptionSpec("calories", value: "N", "Calories, 0-100000", required: true),
            OptionSpec("category", value: "CATEGORY", MealCategoryNames.choices, required: true,
                       choices: MealCategoryNames.all),
            OptionSpec("at", value: "TIME", "When it was eaten: RFC 3339, or YYYY-MM-DD = local midnight (default: now)"),
            OptionSpec("id", value: "UUID", "Use this id instead of a server-generated one"),
        ],
        examples: ["larder meals add --name Oatmeal --calories 350 --category breakfast --at 2026-11-30T08:00:00+08:00"],
        fieldFlags: ["meal_record.name": "--name", "meal_record.calories": "--calories",
                     "meal_record.category": "--category", "meal_record.eaten_at": "--at", "meal_record.id": "--id"]
    ) { command, context throws(CLIError) in
        let meal = MealRecord(
            id: command.value("id") ?? "", name: command.value("name") ?? "",
            calories: try command.int32("calories", in: 0...100_000) ?? 0,
            category: try command.mealCategory("category") ?? .unspecified,
            eatenAt: try command.timestamp("at", context.localTime))
        let created = try await context.call(MealRecordMethods.createMealRecord, CreateMealRecordRequest(mealRecord: meal))
        try context.emit(created, ids: { [created.id] }) { HumanOutput.mealRecord(created, context.localTime) }
    }

    static let update = CommandSpec(
        resource: "meals", name: "update", summary: "Change the given fields of a meal", positionals: ["ID"],
        options: [
            OptionSpec("name", value: "NAME", "The new name"),
            OptionSpec("calories", value: "N", "The new calories, 0-100000"),
            OptionSpec("category", value: "CATEGORY", "The new category: \(MealCategoryNames.choices)",
                       choices: MealCategoryNames.all),
            OptionSpec("at", value: "TIME", "The new time it was eaten: RFC 3339, or YYYY-MM-DD = local midnight"),
        ],
        examples: ["larder meals update ID --calories 420 --category lunch"],
        fieldFlags: ["meal_record.name": "--name", "meal_record.calories": "--calories",
                     "meal_record.category": "--category", "meal_record.eaten_at": "--at", "meal_record.id": "ID"]
    ) { command, context throws(CLIError) in
        let mask = try command.updateMask([
            ("name", "name"), ("calories", "calories"), ("category", "category"), ("at", "eaten_at"),
        ])
        let calories = try command.int32("calories", in: 0...100_000) ?? 0
        let category = try command.mealCategory("category") ?? .unspecified
        let eatenAt = try command.timestamp("at", context.localTime)
        let meal = MealRecord(
            id: try await context.mealID(command.id), name: command.value("name") ?? "",
            calories: calories, category: category, eatenAt: eatenAt)
        let updated = try await context.call(MealRecordMethods.updateMealRecord,
                                             UpdateMealRecordRequest(mealRecord: meal, updateMask: mask))
        try context.emit(updated, ids: { [updated.id] }) { HumanOutput.mealRecord(updated, context.localTime) }
    }

    static let delete = CommandSpec(
        resource: "meals", name: "delete", summary: "Delete a meal", positionals: ["ID"],
        examples: ["larder meals delete ID"],
        fieldFlags: ["id": "ID"]
    ) { command, context throws(CLIError) in
        let id = try await context.mealID(command.id)
        let reply = try await context.call(MealRecordMethods.deleteMealRecord, DeleteMealRecordRequest(id: id))
        try context.emit(reply, ids: { [id] }) { "Deleted meal \(TerminalText.value(id)).\n" }
    }

    static let summary = CommandSpec(
        resource: "meals", name: "summary",
        summary: "Total calories and meal counts per local day and per category",
        options: [
            OptionSpec("since", value: "TIME",
                       "Start, inclusive (RFC 3339, or YYYY-MM-DD = midnight in the zone of --tz or --utc-offset, "
                       + "default this machine's)", required: true),
            OptionSpec("until", value: "TIME", "End, exclusive (YYYY-MM-DD read as --since is)", required: true),
            OptionSpec("tz", value: "ZONE",
                       "The IANA time zone whose days are counted, across DST changes (default: this machine's, from TZ or /etc/localtime)"),
            OptionSpec("utc-offset", value: "±HH:MM", "Count days at this fixed offset instead of a time zone"),
        ],
        examples: ["larder meals summary --since 2026-11-01 --until 2026-12-01 --tz Asia/Taipei",
                   "larder meals summary --since 2026-11-01 --until 2026-12-01 --utc-offset +08:00"],
        fieldFlags: ["start_time": "--since", "end_time": "--until", "utc_offset_minutes": "--utc-offset",
                     "time_zone": "--tz"],
        printsIDs: false
    ) { command, context throws(CLIError) in
        var offset = context.localTime.currentOffset()
        var zone = ""
        if let text = command.value("utc-offset") {
            guard command.value("tz") == nil else {
                throw .usage("give --tz or --utc-offset, not both", command.spec)
            }
            guard let parsed = UTCOffset(parsing: text) else {
                throw .usage("--utc-offset must look like +08:00 or -05:30 (at most ±14:00), got \"\(text)\"",
                             command.spec)
            }
            offset = parsed
        } else if let name = command.value("tz") {
            guard !name.isEmpty else { throw .usage("--tz needs a zone name such as Asia/Taipei", command.spec) }
            zone = name
        } else {
            // This machine's zone by name, so that the server follows its DST changes; a zone
            // Foundation knows only as a fixed offset ("GMT+0800") is sent as that offset.
            if let name = context.localTime.tzdataName { zone = name }
        }
        let zoneIsThisMachines = !zone.isEmpty && command.value("tz") == nil
        let days = try dayZone(zone: zone, offset: offset, command, context)
        let request = SummarizeMealRecordsRequest(
            startTime: try command.timestamp("since", days),
            endTime: try command.timestamp("until", days),
            utcOffsetMinutes: zone.isEmpty ? Int32(offset.minutes) : 0, timeZone: zone)
        let response: SummarizeMealRecordsResponse
        do throws(CLIError) {
            response = try await context.call(MealRecordMethods.summarizeMealRecords, request)
        } catch {
            // The zone came from TZ or /etc/localtime, not from a --tz the user typed.
            guard zoneIsThisMachines, case .rpc(let rpc) = error else { throw error }
            let message = rpc.message.replacing("--tz \"", with: "this machine's time zone (TZ or /etc/localtime) \"")
            throw .rpc(message == rpc.message ? rpc : RPCError(rpc.code, message))
        }
        try context.emit(response) {
            let text = HumanOutput.summary(response, offset: offset, width: context.tableWidth)
            return zone.isEmpty ? text : text.replacing("at UTC\(offset)", with: "in \(zone)")
        }
    }

    /// The zone whose midnights date-only `--since`/`--until` of `meals summary` mean: the zone the
    /// days are counted in (`zone` by name, else the fixed `offset`), so that the bounds are whole days.
    /// - Throws: a usage error when `zone` is a name this machine's zone database lacks and a bound is a date.
    static func dayZone(zone: String, offset: UTCOffset, _ command: ParsedCommand, _ context: CommandContext)
        throws(CLIError) -> LocalTime
    {
        if zone.isEmpty {
            return LocalTime(timeZone: TimeZone(secondsFromGMT: offset.minutes * 60) ?? context.localTime.timeZone)
        }
        if let timeZone = TimeZone(identifier: zone) { return LocalTime(timeZone: timeZone) }
        // The server may know a zone this machine does not; times with an offset need no zone here.
        for option in ["since", "until"] {
            if let text = command.value(option), CivilDate(parsing: text) != nil {
                // The zone is what is wrong, most often (audit 35 L1): named first, with the name
                // this machine knows in other letter case.
                let named = command.value("tz") != nil ? "--tz \(SafeText.quoted(zone))"
                    : "the zone \(SafeText.quoted(zone)) from TZ or /etc/localtime"
                let suggestion = TimeZone.knownTimeZoneIdentifiers.first { $0.lowercased() == zone.lowercased() }
                    .map { " (did you mean \"\($0)\"? zone names are case-sensitive)" } ?? ""
                throw .usage("\(named) is not a time zone this machine knows\(suggestion), so "
                             + "--\(option) \(text) has no midnight to start from; give a zone it knows, or an RFC 3339 "
                             + "time such as \(text)T00:00:00+08:00", command.spec)
            }
        }
        return context.localTime
    }
}
