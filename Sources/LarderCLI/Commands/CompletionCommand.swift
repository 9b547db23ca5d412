/// `larder completion bash|zsh|fish`: a completion script generated from the command catalog.
enum CompletionCommand {
    static let spec = CommandSpec(
        resource: nil, name: "completion",
        summary: "Print a shell completion script for bash, zsh or fish",
        positionals: ["SHELL"],
        examples: ["source <(larder completion bash)        # in ~/.bashrc",
                   "source <(larder completion zsh)         # in ~/.zshrc, after compinit",
                   "larder completion fish > ~/.config/fish/completions/larder.fish"]
    ) { command, context throws(CLIError) in
        let name = command.positionals[0]
        guard let shell = ShellCompletion.Shell(rawValue: name) else {
            let choices = ShellCompletion.Shell.allCases.map(\.rawValue).joined(separator: ", ")
            throw .usage("SHELL must be one of \(choices), got \"\(name)\"", command.spec)
        }
        context.write(ShellCompletion.script(shell, catalog: .larder))
    }
}
