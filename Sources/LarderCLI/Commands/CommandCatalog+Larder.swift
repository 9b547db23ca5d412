extension CommandCatalog {
    /// Every command of `larder`.
    public static let larder: CommandCatalog = CommandCatalog(
        resources: [GroupCommands.resource, CategoryCommands.resource, LocationCommands.resource,
                    MealCommands.resource],
        commands: [HealthCommand.spec, ReflectionCommands.methods, ReflectionCommands.describe, CallCommand.spec,
                   StatsCommand.spec, VersionCommand.spec, CompletionCommand.spec])

    /// The usage text of `topic`.
    func usage(_ topic: HelpTopic) -> String {
        switch topic {
        case .top:
            return Usage.top(self)
        case .resource(let name):
            return resource(named: name).map(Usage.resource) ?? Usage.top(self)
        case .command(let path):
            let words = path.split(separator: " ").map(String.init)
            if words.count == 2, let command = resource(named: words[0])?.command(named: words[1]) {
                return Usage.command(command)
            }
            if words.count == 1, let command = command(named: words[0]) { return Usage.command(command) }
            return Usage.top(self)
        }
    }
}
