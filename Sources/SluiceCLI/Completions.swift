import ArgumentParser

/// `sluice completions SHELL`: prints the completion script for bash, zsh or fish.
struct Completions: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the shell completion script for bash, zsh or fish.",
        discussion: """
            `make install` installs all three. By hand:
              sluice completions bash > ~/.local/share/bash-completion/completions/sluice
              sluice completions zsh > ~/.zfunc/_sluice
              sluice completions fish > ~/.config/fish/completions/sluice.fish
            """)

    @Argument(help: "bash, zsh or fish.")
    var shell: CompletionShell

    func run() {
        print(Sluice.completionScript(for: shell), terminator: "")
    }
}

extension CompletionShell: @retroactive ExpressibleByArgument {}
