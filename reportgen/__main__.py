from reportgen.commands.cli import run

run()
