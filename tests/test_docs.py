"""The README and the documentation site stay correct and speak to users: the site builds
with `mkdocs build --strict` (a broken link, anchor or stale page fails), the README is a
short front page whose commands are the ones CI runs and whose links resolve, its tour shows
what `loopfix check` really prints, and no page or docstring reads like a development log."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"

SETUP = (
    "python3 -m venv .venv && .venv/bin/pip install torch==2.13.0 && "
    ".venv/bin/pip install -e '.[dev]' && .venv/bin/loopfix apply --dry-run "
    "corpus/lf001_lstm_word_lm_slicing/before.py "
    "corpus/lf002_gan_generator_reuses_d_output/before.py"
)
TEST_COMMAND = ".venv/bin/python -m pytest -n 2 --dist loadfile"


def test_mkdocs_build_strict(tmp_path):
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("mkdocs is not installed (it comes with the `dev` extra)")
    if importlib.util.find_spec("material") is None:
        pytest.skip("mkdocs-material is not installed (it comes with the `dev` extra)")
    site = tmp_path / "site"
    command = [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)]
    command += ["--config-file", str(ROOT / "mkdocs.yml")]
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True, env=env)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert "WARNING" not in output, output
    rules = (site / "rules" / "index.html").read_text()
    # the SARIF helpUri and the editors' codeDescription point at these anchors
    assert 'id="lf001-hidden-state-not-detached"' in rules
    assert 'id="lf009-gradient-leak"' in rules


REGENERATE = (
    ".venv/bin/python -c 'from loopfix.report import rules_markdown; "
    'open("docs/rules.md", "w").write(rules_markdown())\''
)


def test_the_rules_page_is_generated_from_the_rules():
    from loopfix.report import rules_markdown

    current = (DOCS / "rules.md").read_text() == rules_markdown()
    assert current, f"docs/rules.md is stale; regenerate it with {REGENERATE}"
    assert REGENERATE in (DOCS / "how-it-works.md").read_text()


def test_every_page_is_in_the_navigation():
    config = (ROOT / "mkdocs.yml").read_text()
    for page in DOCS.glob("*.md"):
        assert f" {page.name}\n" in config, f"{page.name} is not in mkdocs.yml's nav"


def test_readme_is_a_front_page():
    lines = README.read_text().splitlines()
    assert len(lines) <= 200, f"README.md has {len(lines)} lines; move detail into docs/"


def test_readme_commands_are_what_ci_runs():
    text = README.read_text()
    assert f"```sh\n{SETUP}\n```" in text
    assert f"```sh\n{TEST_COMMAND}\n```" in text
    ci = (ROOT / ".ci" / "run").read_text()
    assert "python3 -m venv .venv" in ci
    assert ".venv/bin/pip install --quiet torch==2.13.0" in ci
    assert ".venv/bin/pip install --quiet -e '.[dev]'" in ci
    assert ci.rstrip().endswith(TEST_COMMAND)
    for case in re.findall(r"corpus/(\w+)/before\.py", SETUP):
        assert (ROOT / "corpus" / case / "before.py").is_file()


def _anchors(markdown: str) -> set[str]:
    """The ids mkdocs gives a page's headings (Python-Markdown's toc slugify)."""
    from markdown.extensions.toc import slugify

    headings = re.findall(r"^#+ (.+?)\s*$", re.sub(r"```.*?```", "", markdown, flags=re.S), re.M)
    return {slugify(heading, "-") for heading in headings}


def test_readme_links_resolve():
    text = README.read_text()
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert any(link.startswith("docs/") for link in links)
    for link in links:
        if re.match(r"[a-z]+://", link):
            continue
        path, _, anchor = link.partition("#")
        target = ROOT / path
        assert target.is_file(), f"README links {link}, which does not exist"
        if anchor and importlib.util.find_spec("markdown") is not None:
            assert anchor in _anchors(target.read_text()), f"README links {link}: no such heading"


def test_readme_tour_shows_what_check_prints(tmp_path):
    """The tour's `loopfix check .` output is the real output on the two corpus cases."""
    shutil.copy(ROOT / "corpus" / "lf001_lstm_word_lm_slicing" / "before.py", tmp_path / "train.py")
    gan = ROOT / "corpus" / "lf002_gan_discriminator_to_device" / "before.py"
    shutil.copy(gan, tmp_path / "train_gan.py")
    (tmp_path / ".git").mkdir()
    command = [sys.executable, "-m", "loopfix", "check", "--no-cache", "."]
    result = subprocess.run(command, cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 1, result.stderr
    printed = (result.stdout + result.stderr).splitlines()
    tour = README.read_text().split("$ loopfix check .\n", 1)[1].split("```", 1)[0]
    assert sorted(tour.splitlines()) == sorted(printed)


def test_readme_diff_is_the_corpus_fix():
    text = README.read_text()
    diff = text.split("```diff\n", 1)[1].split("```", 1)[0]
    case = ROOT / "corpus" / "lf001_lstm_word_lm_slicing"
    before, after = (case / "before.py").read_text(), (case / "after.py").read_text()
    for line in diff.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            assert line[1:] in after.splitlines() and line[1:] not in before.splitlines()
        elif line.startswith(" "):
            assert line[1:] in before.splitlines()


# Wording of a development log, not of a product: who worked on it and when, and what an
# earlier state did. Words such as "helper" (a helper function), "session" (a process
# session, in the sandbox's code) and "adversarial" (a GAN's game) stay legitimate.
DEVELOPMENT_LOG = [
    r"\bthis session\b",
    r"\b(?:last|previous|earlier|next|later|an? other|each|every) sessions?\b",
    r"\bsession's\b",
    r"\badversarial rounds?\b",
    r"\b(?:first|second|third|fourth|fifth|next|last|previous|earlier|another|this) round\b",
    r"\bhelpers? (?:who|session|agent)s?\b",
    r"\b(?:by|from|of) a helper\b(?! (?:function|method|module|class|loop|it))",
    r"\bused to (?:be|do|report|flag|miss|rewrite|write|say|take|give|find|skip)\b",
    r"\b(?:loopfix|it|the rule|the tool) used to\b",
    r"\b(?:earlier|previous|older|last|first) version\b",
    r"\bno longer (?:reported|flagged|missed|rewritten)\b",
    r"\bnow (?:fixed|reported|found|caught)\b",
]
# In user-facing pages "session" has no legitimate use at all.
PAGES_ONLY = [r"\bsessions?\b"]


def _pages() -> list[Path]:
    pages = [README, *sorted(DOCS.rglob("*.md"))]
    changelog = ROOT / "CHANGELOG.md"
    return pages + [changelog] if changelog.exists() else pages


def _matches(text: str, patterns: list[str]) -> list[str]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if any(re.search(pattern, line, re.IGNORECASE) for pattern in patterns):
            found.append(f"{number}: {line.strip()}")
    return found


def test_pages_have_no_development_log_wording():
    problems = []
    for page in _pages():
        for hit in _matches(page.read_text(), DEVELOPMENT_LOG + PAGES_ONLY):
            problems.append(f"{page.relative_to(ROOT)}:{hit}")
    assert not problems, "\n".join(problems)


def test_code_has_no_development_log_wording():
    problems = []
    for module in sorted((ROOT / "src" / "loopfix").rglob("*.py")):
        for hit in _matches(module.read_text(), DEVELOPMENT_LOG):
            problems.append(f"{module.relative_to(ROOT)}:{hit}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    ("text", "flagged"),
    [
        ("Found by an adversarial round and not fixed yet", True),
        ("How this session's fixes changed the corpus", True),
        ("a helper who had not seen the code", True),
        ("the first version also reported it", True),
        ("loopfix used to report this", True),
        ("measured on the earlier version", True),
        ("a `build_model()` helper it calls", False),
        ("a backward inside a helper counts where the helper is called", False),
        ("the two optimizers play an adversarial game", False),
        ("the child starts its own session", False),
        ("in a session of its own, out of the worker's group", False),
        ("the table is used to decide which tensor is kept", False),
    ],
)
def test_development_log_pattern(text, flagged):
    assert bool(_matches(text, DEVELOPMENT_LOG)) == flagged
