"""README.md and docs/ agree with --help (issue 26 item 6): every option the user docs mention
is one the grader(s) they describe accept (an old spelling only where it is called old), and
every option a grader's --help lists is documented on its page or in docs/reports.md."""
import re

import pytest

from conftest import REPO
from test_reports_support import NAMES, grader

DOCS = REPO / "docs"
OTHER_TOOLS = ("sbatch", "#SBATCH", "build_graders", "pip ")     # lines quoting other programs' options
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def mentioned(path) -> set:
    found = set()
    for line in path.read_text().splitlines():
        if not any(tool in line for tool in OTHER_TOOLS):
            found |= set(OPTION.findall(line))
    return found - {"--qui"}         # reports.md's example of a refused abbreviation


def accepted(name) -> set:
    p = grader(name).build_parser()
    return {o for a in p._actions for o in a.option_strings if o.startswith("--")}


def hidden(name) -> set:
    import argparse
    p = grader(name).build_parser()
    return {o for a in p._actions for o in a.option_strings if a.help == argparse.SUPPRESS}


def old_spellings_are_called_old(path):
    G = grader("scicode")
    text = path.read_text()
    for old in G.DEPRECATED_OPTIONS:
        for m in re.finditer(re.escape(old) + r"(?![\w-])", text):
            window = text[max(0, m.start() - 120):m.end() + 120].lower()
            assert re.search(r"\bold\b|formerly|deprecated", window), (path.name, old, window)


@pytest.mark.parametrize("name", NAMES)
def test_each_grader_page_mentions_only_its_own_options(name):
    page = DOCS / f"{name}.md"
    extra = mentioned(page) - accepted(name) - set(grader(name).DEPRECATED_OPTIONS)
    assert not extra, (page.name, sorted(extra))
    old_spellings_are_called_old(page)


@pytest.mark.parametrize("name", NAMES)
def test_every_option_of_a_grader_is_documented(name):
    documented = mentioned(DOCS / f"{name}.md") | mentioned(DOCS / "reports.md")
    missing = accepted(name) - hidden(name) - {"--help"} - documented
    assert not missing, (name, sorted(missing))


def test_readme_and_reports_mention_only_options_some_grader_has():
    every = set().union(*(accepted(n) for n in NAMES)) | set(grader("scicode").DEPRECATED_OPTIONS)
    for path in (REPO / "README.md", DOCS / "reports.md"):
        extra = mentioned(path) - every
        assert not extra, (path.name, sorted(extra))
        old_spellings_are_called_old(path)


def test_the_shared_option_table_lists_the_vocabulary():
    table = (DOCS / "reports.md").read_text().split("## Options every grader spells alike")[1].split("##")[0]
    for option, (metavar, _) in grader("fem").SHARED_OPTIONS.items():
        assert f"`{option}{' ' + metavar if metavar else ''}`" in table, option
