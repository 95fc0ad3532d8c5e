import Foundation
import KilnKit

/// The completion scripts of `kiln completions`, made from the commands' declarations (`CommandEntry.options`, the
/// global options and `kiln help --man`): the options a shell offers are exactly those the parser accepts.
struct ShellCompletion {
    /// The shells there is a script for.
    enum Shell: String, CaseIterable, Sendable { case bash, zsh, fish }

    let commands: [CommandEntry]

    /// The script for `shell`.
    func script(for shell: Shell) -> String {
        switch shell {
        case .bash: return bash()
        case .zsh: return zsh()
        case .fish: return fish()
        }
    }

    /// Every command a shell offers after `kiln`, with its abstract, options and what its arguments are: the
    /// declared commands, then `help`.
    private var entries: [(name: String, abstract: String, options: [CommandOption], arguments: CommandOption.Completion)] {
        commands.map { ($0.name, $0.abstract, $0.options + [ShellCompletion.helpOption], $0.argumentCompletion) }
            + [("help", CommandLineTool.helpAbstract, CommandLineTool.helpOptions, .choices(commands.map(\.name)))]
    }

    /// `--help`, which every command takes besides its own options.
    static let helpOption = CommandOption(CommandLineTool.helpOption.name, value: nil, help: "Shows the command's help.")

    /// The first sentence of an option's help, for the shells that show one beside each option.
    static func summary(_ help: String) -> String {
        let text = TextFolding.collapseSpaces(help)
        var searched = text.startIndex
        while let end = text.range(of: ". ", range: searched..<text.endIndex) {
            // "e.g. " and "i.e. " do not end a sentence.
            let before = text[..<end.lowerBound]
            if !(before.hasSuffix("e.g") || before.hasSuffix("i.e")) { return String(before) }
            searched = end.upperBound
        }
        return text.hasSuffix(".") ? String(text.dropLast()) : text
    }

    // MARK: bash

    private func bash() -> String {
        var text = """
            # bash completion for kiln, printed by `kiln completions bash`; load it with: source <(kiln completions bash)
            _kiln_reply() {
                mapfile -t COMPREPLY < <(compgen "$@" -- "$cur")
            }

            _kiln() {
                local cur="${COMP_WORDS[COMP_CWORD]}" prev=""
                (( COMP_CWORD > 0 )) && prev="${COMP_WORDS[COMP_CWORD-1]}"
                # --option=value: bash splits at "=".
                if [[ "$cur" == "=" ]]; then
                    cur=""
                elif [[ "$prev" == "=" ]] && (( COMP_CWORD > 1 )); then
                    prev="${COMP_WORDS[COMP_CWORD-2]}"
                fi
                COMPREPLY=()
                if (( COMP_CWORD == 1 )); then
                    if [[ "$cur" == -* ]]; then
                        _kiln_reply -W "\(CommandLineTool.globalOptions.map(\.name).joined(separator: " "))"
                    else
                        _kiln_reply -W "\(entries.map(\.name).joined(separator: " "))"
                    fi
                    return 0
                fi
                case "${COMP_WORDS[1]}" in

            """
        for entry in entries {
            text += "        \(entry.name))\n"
            let valued = entry.options.filter { $0.value != nil }
            if !valued.isEmpty {
                text += "            case \"$prev\" in\n"
                for option in valued {
                    text += "                \(option.name)) \(ShellCompletion.bashReply(option.completion)) return 0 ;;\n"
                }
                text += "            esac\n"
            }
            text += """
                            if [[ "$cur" == -* ]]; then
                                _kiln_reply -W "\(entry.options.map(\.name).joined(separator: " "))"
                            \(ShellCompletion.bashArguments(entry.arguments))
                            fi
                            ;;

                """
        }
        text += """
                esac
                return 0
            }
            complete -o filenames -F _kiln kiln

            """
        return text
    }

    private static func bashReply(_ completion: CommandOption.Completion) -> String {
        switch completion {
        case .none, .text: return ":;"
        case .choices(let words): return "_kiln_reply -W \"\(words.joined(separator: " "))\";"
        case .files, .wordThenFiles: return "_kiln_reply -f;"
        case .folders: return "_kiln_reply -d;"
        }
    }

    /// The `elif`/`else` branches of a command's arguments (the first word right after the command).
    private static func bashArguments(_ completion: CommandOption.Completion) -> String {
        guard case .wordThenFiles(let words) = completion else { return "else\n                    " + bashReply(completion) }
        return "elif (( COMP_CWORD == 2 )); then\n                    " + bashReply(.choices(words))
            + "\n                else\n                    " + bashReply(.files)
    }

    // MARK: zsh

    private func zsh() -> String {
        var text = """
            #compdef kiln
            # zsh completion for kiln, printed by `kiln completions zsh`; install it as _kiln in $fpath, or load it with
            # source <(kiln completions zsh)
            _kiln() {
                local -a commands globals
                commands=(

            """
        for entry in entries { text += "        " + ShellCompletion.zshQuoted(entry.name + ":" + ShellCompletion.summary(entry.abstract)) + "\n" }
        text += "    )\n    globals=(\n"
        for option in CommandLineTool.globalOptions {
            text += "        " + ShellCompletion.zshQuoted(option.name + ":" + ShellCompletion.summary(option.help)) + "\n"
        }
        text += """
                )
                if (( CURRENT == 2 )); then
                    if [[ $PREFIX == -* ]]; then
                        _describe -t options 'kiln option' globals
                    else
                        _describe -t commands 'kiln command' commands
                    fi
                    return
                fi
                local command=${words[2]}
                words=("${(@)words[2,-1]}")
                (( CURRENT-- ))
                case $command in

            """
        for entry in entries {
            text += "        \(entry.name))\n            _arguments -S"
            for option in entry.options {
                var spec = (option.repeatable ? "*" : "") + option.name + "[" + ShellCompletion.zshDescription(option.help) + "]"
                if let value = option.value { spec += ":" + value.replacingOccurrences(of: ":", with: "\\:") + ":" + ShellCompletion.zshAction(option.completion) }
                text += " \\\n                " + ShellCompletion.zshQuoted(spec)
            }
            if case .wordThenFiles(let words) = entry.arguments {
                text += " \\\n                " + ShellCompletion.zshQuoted("1:argument:" + ShellCompletion.zshAction(.choices(words)))
                text += " \\\n                " + ShellCompletion.zshQuoted("*:argument:" + ShellCompletion.zshAction(.files)) + "\n            ;;\n"
                continue
            }
            let arguments = entry.name == "help" || entry.name == CompletionsCommand.name ? "1:argument:" : "*:argument:"
            text += " \\\n                " + ShellCompletion.zshQuoted(arguments + ShellCompletion.zshAction(entry.arguments)) + "\n            ;;\n"
        }
        text += """
                esac
            }

            if [[ "$funcstack[1]" == "_kiln" ]]; then
                _kiln "$@"
            else
                compdef _kiln kiln
            fi

            """
        return text
    }

    private static func zshAction(_ completion: CommandOption.Completion) -> String {
        switch completion {
        case .none, .text: return " "
        case .choices(let words): return "(" + words.joined(separator: " ") + ")"
        case .files, .wordThenFiles: return "_files"
        case .folders: return "_files -/"
        }
    }

    /// An option's explanation inside `[…]` of an `_arguments` spec.
    private static func zshDescription(_ help: String) -> String {
        summary(help).replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "[", with: "\\[")
            .replacingOccurrences(of: "]", with: "\\]")
    }

    private static func zshQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    // MARK: fish

    private func fish() -> String {
        var lines = [
            "# fish completion for kiln, printed by `kiln completions fish`; load it with: kiln completions fish | source",
            "function __kiln_command_is -a name",
            "    set -l tokens (commandline -opc)",
            "    test (count $tokens) -ge 2; and test \"$tokens[2]\" = \"$name\"",
            "end",
            "function __kiln_first_argument",
            "    test (count (commandline -opc)) -eq 2",
            "end",
            "function __kiln_no_command",
            "    test (count (commandline -opc)) -eq 1",
            "end",
            "complete -c kiln -f",
        ]
        for entry in entries {
            lines.append("complete -c kiln -n __kiln_no_command -a \(entry.name) -d \(ShellCompletion.fishQuoted(ShellCompletion.summary(entry.abstract)))")
        }
        for option in CommandLineTool.globalOptions {
            lines.append("complete -c kiln -n __kiln_no_command -l \(option.name.dropFirst(2)) -d \(ShellCompletion.fishQuoted(ShellCompletion.summary(option.help)))")
        }
        for entry in entries {
            let condition = "-n '__kiln_command_is \(entry.name)'"
            for option in entry.options {
                lines.append("complete -c kiln \(condition) -l \(option.name.dropFirst(2))\(ShellCompletion.fishValue(option.completion)) -d \(ShellCompletion.fishQuoted(ShellCompletion.summary(option.help)))")
            }
            if case .wordThenFiles(let words) = entry.arguments {
                lines.append("complete -c kiln -n '__kiln_command_is \(entry.name); and __kiln_first_argument'\(ShellCompletion.fishValue(.choices(words), positional: true))")
                lines.append("complete -c kiln -n '__kiln_command_is \(entry.name); and not __kiln_first_argument'\(ShellCompletion.fishValue(.files, positional: true))")
                continue
            }
            lines.append("complete -c kiln \(condition)\(ShellCompletion.fishValue(entry.arguments, positional: true))")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// The flags of a `complete` line for an option's value, or (`positional`) for a command's arguments.
    private static func fishValue(_ completion: CommandOption.Completion, positional: Bool = false) -> String {
        switch completion {
        case .none: return ""
        case .text: return positional ? "" : " -x"
        case .choices(let words): return " -x -a " + fishQuoted(words.joined(separator: " "))
        case .files, .wordThenFiles: return positional ? " -F" : " -r -F"
        case .folders: return " -x -a '(__fish_complete_directories (commandline -ct))'"
        }
    }

    private static func fishQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }
}
