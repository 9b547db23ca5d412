import LarderAPI

/// `larder health`.
enum HealthCommand {
    static let spec = CommandSpec(
        resource: nil, name: "health",
        summary: "Check that the server is serving (exit status 1 when it answers NOT_SERVING; "
            + "24 UNAVAILABLE when it cannot be reached, as when it drains: it accepts no new connections; "
            + "14 DEADLINE_EXCEEDED when it does not answer within --timeout: a stuck server, so treat it as down too)",
        options: [OptionSpec("service", value: "NAME", "Check one service, e.g. larder.v1.LocationService")],
        examples: ["larder health", "larder health --service larder.v1.MealRecordService --json"],
        printsIDs: false
    ) { command, context throws(CLIError) in
        let response = try await context.call(HealthMethods.check,
                                              HealthCheckRequest(service: command.value("service") ?? ""))
        try context.emit(response) { HealthCommand.statusText(response.status) + "\n" }
        if response.status != .serving { context.exitStatus = ExitCode.notServing }
    }

    /// `SERVING`, or for a status a newer server added, its number and that this build does not know it.
    static func statusText(_ status: HealthCheckResponse.ServingStatus) -> String {
        if case .unrecognized(let number) = status { return "status \(number) (unknown to this larder)" }
        return status.protoName
    }
}
