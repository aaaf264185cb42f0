"""The card, the topics and a saved model's check as Python gives them (dptopic.reporting.terminal, .verification):
what the command line prints, without the command line."""
import io
import json

import pytest
from rich.console import Console
from rich.table import Table

from dptopic.accounting import LaplaceEvent, PrivacyLedger
from dptopic.errors import DPTopicError
from dptopic.reporting.terminal import print_privacy, print_table, print_verification
from dptopic.reporting.verification import verify_saved_model


def test_a_wide_table_off_a_terminal_is_printed_whole_and_the_console_keeps_its_width():
    buf = io.StringIO()
    console = Console(file=buf, width=40)
    t = Table()
    t.add_column("figure")
    t.add_column("value")
    t.add_row("x" * 70, "1.23456")
    print_table(console, t)
    assert "x" * 70 in buf.getvalue() and "1.23456" in buf.getvalue()       # neither cut nor split
    assert console.width == 40


def _report(tmp_path, **change):
    led = PrivacyLedger(unit="word")
    led.spend(LaplaceEvent(scale=1.0), 3)
    rep = {**led.report(1e-5), "private": True}
    rep.update({k: v(rep) for k, v in change.items()})
    path = tmp_path / "privacy.json"
    path.write_text(json.dumps(rep))
    return path


def test_verify_saved_model_recomputes_a_report_and_refuses_one_below_its_events(tmp_path):
    v = verify_saved_model(_report(tmp_path))
    assert v.check.status == "verified" and v.events == "1 event repeated 3 times" and not v.no_guarantee
    v.raise_unless_checked()
    buf = io.StringIO()
    print_verification(v, "privacy.json", Console(file=buf, width=200))
    assert "verified: every row of the table holds" in buf.getvalue()
    low = verify_saved_model(_report(tmp_path, epsilon=lambda r: r["epsilon"] / 2))
    assert low.check.status == "failed"
    with pytest.raises(DPTopicError, match="does not match its own events"):
        low.raise_unless_checked()


def test_print_privacy_states_the_guarantee_of_a_report(tmp_path):
    rep = json.loads(_report(tmp_path).read_text())
    buf = io.StringIO()
    print_privacy(rep, Console(file=buf, width=200))
    assert "GUARANTEE" in buf.getvalue() and "word" in buf.getvalue()


def test_the_console_prints_text_as_text_and_control_characters_as_escapes():
    import io

    from dptopic.reporting.terminal import esc, make_console, plain, styled

    console = make_console()
    console.file = io.StringIO()
    console.print("[bold red]x [/] :smile: a\x1bb")
    console.print(f"[bold]{esc('[/]')}[/] c", markup=True)
    console.print(styled(f"[bold]{esc('[i]y')}[/]"))
    out = console.file.getvalue()
    assert "[bold red]x [/] :smile: a\\x1bb" in out and "[/] c" in out and "[i]y" in out and "\x1b" not in out
    assert plain("a\rb\tc\nd\u202e") == "a\\rb\tc\nd\\u202e"
