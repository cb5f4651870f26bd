"""An unsaved experiment stopped early says its runs are not kept."""

from __future__ import annotations

from surge.experiments.recorder import NOT_KEPT


def test_an_unsaved_experiment_stopped_early_says_its_runs_are_not_kept():
    from surge.present.terminal.experiment_tables import print_experiment
    from surge.present.terminal.summary import summary_console

    console = summary_console()
    with console.capture() as captured:
        print_experiment(
            {
                "kind": "other",
                "complete": False,
                "stop_signal": "SIGINT",
                "directory": None,
                "runs": [{"complete": True, "label": "1"}],
                "name": "x",
                "parameters": {},
                "experiment_id": "0" * 32,
            },
            console,
        )
    assert f"experiment incomplete: stopped by SIGINT; 1 completed run(s) {NOT_KEPT}" in captured.get()
