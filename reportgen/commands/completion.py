"""`reportgen completion bash|zsh|fish`: shell completion scripts generated from the argument parser, so that a new
command or option completes without anyone editing a script. Commands, nested commands (`ingest trace`), options
and the choices of an option complete; everything else completes as a file name.
"""

from __future__ import annotations

import argparse
import shlex

from reportgen.commands.argtree import children, subcommands


def script(shell: str, parser: argparse.ArgumentParser) -> str:
    commands = _commands(parser)
    return {"bash": _bash, "zsh": _zsh, "fish": _fish}[shell](commands)


Command = tuple[tuple[str, ...], argparse.ArgumentParser]  # the words that name it, and its parser


def _commands(parser: argparse.ArgumentParser) -> list[Command]:
    return [((), parser), *subcommands(parser)]


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings and not isinstance(a, argparse._SubParsersAction)]


def _values(action: argparse.Action) -> tuple[str, ...]:
    """What an option's value completes to: its choices, or the values a list type allows (`--format`)."""
    if action.choices:
        return tuple(str(choice) for choice in action.choices)
    return tuple(getattr(action.type, "allowed", ()))


def _help(parser: argparse.ArgumentParser, name: str) -> str:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                if choice.dest == name:
                    return choice.help or ""
    return ""


# ------------------------------------------------------------------------------------------------------- bash
def _bash(commands: list[Command]) -> str:
    cases = []
    for words, parser in commands:
        names = " ".join(children(parser))
        options = " ".join(o for a in _options(parser) for o in a.option_strings)
        choices = "".join(f"        {shlex.quote(o)}) COMPREPLY=($(compgen -W {shlex.quote(' '.join(_values(a)))} "
                          '-- "$cur")); return;;\n'
                          for a in _options(parser) if _values(a) for o in a.option_strings)
        values = " ".join(v for a in parser._actions if not a.option_strings and a.choices
                          and not isinstance(a, argparse._SubParsersAction) for v in a.choices)
        cases.append(f"    {_label(words)})\n"
                     f"      children={shlex.quote(names)}; options={shlex.quote(options)}; "
                     f"values={shlex.quote(values)}\n"
                     f'      case "$prev" in\n{choices}      esac;;\n')
    named = "".join(f"    {_label(w)}) echo {shlex.quote(' '.join(children(p)))};;\n"
                    for w, p in commands if children(p))
    return f'''# reportgen completion for bash: eval "$(reportgen completion bash)"
_reportgen() {{
  local cur="${{COMP_WORDS[COMP_CWORD]}}" prev="${{COMP_WORDS[COMP_CWORD-1]}}"
  local path="" word children="" options="" values="" i
  # the command named so far: the words before the cursor that are commands
  for ((i = 1; i < COMP_CWORD; i++)); do
    word="${{COMP_WORDS[i]}}"
    case " $(_reportgen_children "$path") " in *" $word "*) path="${{path:+$path }}$word";; esac
  done
  case "$path" in
{"".join(cases)}  esac
  if [[ "$cur" == -* ]]; then
    COMPREPLY=($(compgen -W "$options" -- "$cur"))
  elif [[ -n "$children$values" ]]; then
    COMPREPLY=($(compgen -W "$children $values" -- "$cur"))
  else
    COMPREPLY=($(compgen -f -- "$cur"))
  fi
}}
_reportgen_children() {{
  case "$1" in
{named}  esac
}}
complete -o filenames -o bashdefault -F _reportgen reportgen
'''


def _label(words: tuple[str, ...]) -> str:
    """A bash case label for the command named by `words` ('""' for reportgen itself)."""
    return shlex.quote(" ".join(words)) if words else '""'


# -------------------------------------------------------------------------------------------------------- zsh
def _zsh(commands: list[Command]) -> str:
    return ("# reportgen completion for zsh: eval \"$(reportgen completion zsh)\" (uses zsh's bash completion)\n"
            "autoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n"
            + _bash(commands).split("\n", 1)[1])


# ------------------------------------------------------------------------------------------------------- fish
def _fish(commands: list[Command]) -> str:
    lines = ["# reportgen completion for fish: reportgen completion fish > ~/.config/fish/completions/reportgen.fish",
             "complete -c reportgen -f"]
    for words, parser in commands:
        condition = _fish_condition(words, [w for w, _ in commands])
        for name, child in children(parser).items():
            lines.append(f"complete -c reportgen -n {shlex.quote(condition)} -a {shlex.quote(name)} "
                         f"-d {shlex.quote(_help(parser, name) or child.description or '')}")
        for action in _options(parser):
            flags = " ".join(f"-l {o[2:]}" if o.startswith("--") else f"-s {o[1:]}" for o in action.option_strings)
            takes = "" if action.nargs == 0 else (f" -x -a {shlex.quote(' '.join(_values(action)))}"
                                                  if _values(action) else " -r -F")
            lines.append(f"complete -c reportgen -n {shlex.quote(condition)} {flags}{takes} "
                         f"-d {shlex.quote(action.help or '')}")
        for action in parser._actions:
            if not action.option_strings and action.choices and not isinstance(action, argparse._SubParsersAction):
                lines.append(f"complete -c reportgen -n {shlex.quote(condition)} -a "
                             f"{shlex.quote(' '.join(action.choices))}")
        if words and not children(parser):
            lines.append(f"complete -c reportgen -n {shlex.quote(condition)} -F")
    return "\n".join(lines) + "\n"


def _fish_condition(words: tuple[str, ...], all_words: list[tuple[str, ...]]) -> str:
    """True in fish exactly when the command line names `words` and no deeper command."""
    if not words:
        return "__fish_use_subcommand"
    deeper = sorted({w[len(words)] for w in all_words if len(w) > len(words) and w[:len(words)] == words})
    condition = "; and ".join(f"__fish_seen_subcommand_from {word}" for word in words)
    if deeper:
        condition += f"; and not __fish_seen_subcommand_from {' '.join(deeper)}"
    return condition
