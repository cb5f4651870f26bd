"""Every command is in the module the CLI's command table says (what start-up imports for it)."""

from __future__ import annotations

import click

from surge.cli import COMMANDS, app


def test_every_command_is_where_the_table_says():
    ctx = click.Context(app)
    for name in COMMANDS:
        command = app.get_command(ctx, name)
        assert isinstance(command, click.Command) and command.name == name
