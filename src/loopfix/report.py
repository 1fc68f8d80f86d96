"""Findings as text, JSON, SARIF 2.1.0 or GitHub workflow annotations, and per-rule counts.

Every format takes the same rows: one dict per finding with `path` (as shown to the user),
`line`, `column`, `end_line`, `end_column` (1-based; columns count characters), `rule`,
`name`, `message`, `fixable` (`apply` fixes it with the run's settings), `fix_applicability`
("safe", "unsafe" or None: Ruff's fix safety) and `fix_title`. `[*]` marks a finding `apply`
fixes, `[-]` one whose only fix is unsafe and not enabled (it changes what the code computes;
`apply --unsafe-fixes` writes it).
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from enum import StrEnum
from pathlib import Path

from loopfix import __version__
from loopfix.rules import ALL_RULES, CRASHING_RULES, rule_by_code

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


class OutputFormat(StrEnum):
    text = "text"
    json = "json"
    sarif = "sarif"
    github = "github"


HELP_URI = "https://github.com/loopfix/loopfix/blob/main/docs/rules.md#{anchor}"


def render(
    rows: list[dict], output_format: OutputFormat, base: Path, errors: list[str] = ()
) -> str:
    """The report; `errors` (files that could not be read or parsed, one line each) become
    SARIF tool notifications and `::error` annotations (the text and JSON formats leave them
    to stderr)."""
    if output_format is OutputFormat.json:
        return json.dumps(rows, indent=2) + "\n"
    if output_format is OutputFormat.sarif:
        return json.dumps(sarif(rows, base, errors), indent=2) + "\n"
    if output_format is OutputFormat.github:
        lines = [github_annotation(row, base) for row in rows]
        lines += [github_error(message, base) for message in errors]
        return "".join(line + "\n" for line in lines)
    return "".join(text_line(row) + "\n" for row in rows)


def text_line(row: dict) -> str:
    marker = " [*]" if row["fixable"] else ""
    if not row["fixable"] and row.get("fix_applicability") == "unsafe":
        marker = " [-]"
    cell = f"cell {row['cell']}:" if row.get("cell") is not None else ""  # as Ruff writes it
    where = f"{row['path']}:{cell}{row['line']}:{row['column']}"
    return f"{where}: {row['rule']}{marker} {row['message']}"


def statistics(rows: list[dict], as_json: bool = False) -> str:
    """One line per rule: count, code, name and how many of them `apply` can fix (or, as
    JSON, one object per rule with `code`, `name`, `count`, `fixable` and `unsafe`)."""
    if as_json:
        codes = sorted({row["rule"] for row in rows})
        table = [
            {
                "code": code,
                "name": rule_by_code(code).name,
                "count": sum(row["rule"] == code for row in rows),
                "fixable": sum(row["rule"] == code and row["fixable"] for row in rows),
                "unsafe": sum(
                    row["rule"] == code
                    and not row["fixable"]
                    and row.get("fix_applicability") == "unsafe"
                    for row in rows
                ),
            }
            for code in codes
        ]
        table.sort(key=lambda entry: (-entry["count"], entry["code"]))
        return json.dumps(table, indent=2) + "\n"
    counts = Counter(row["rule"] for row in rows)
    fixable = Counter(row["rule"] for row in rows if row["fixable"])
    unsafe = Counter(
        row["rule"]
        for row in rows
        if not row["fixable"] and row.get("fix_applicability") == "unsafe"
    )
    lines = []
    for code, count in sorted(counts.items(), key=lambda item: (-item[1], item[0])):
        rule = rule_by_code(code)
        fixes = f"  [*] {fixable[code]} fixable" if fixable[code] else ""
        fixes += f"  [-] {unsafe[code]} hidden unsafe fix(es)" if unsafe[code] else ""
        lines.append(f"{count:>5}  {code}  {rule.name}{fixes}\n")
    return "".join(lines)


def _level(code: str) -> str:
    return "error" if code in CRASHING_RULES else "warning"


def sarif(rows: list[dict], base: Path, errors: list[str] = ()) -> dict:
    """A SARIF 2.1.0 log: rule metadata (with help URIs and tags), results whose URIs are
    relative to `base` (with `fixes` for the findings `apply` fixes, as Ruff's SARIF has), and
    an invocation whose notifications name the files that could not be read or parsed."""
    index = {rule.code: number for number, rule in enumerate(ALL_RULES)}
    results = []
    for row in rows:
        uri = repo_relative(row["path"], base)
        results.append(
            {
                "ruleId": row["rule"],
                "ruleIndex": index[row["rule"]],
                "level": _level(row["rule"]),
                "message": {"text": row["message"]},
                "locations": [
                    {
                        "physicalLocation": {
                            "artifactLocation": {
                                "uri": uri,
                                "uriBaseId": "%SRCROOT%",
                            },
                            "region": {
                                "startLine": row["line"],
                                "startColumn": row["column"],
                                "endLine": row["end_line"],
                                "endColumn": row["end_column"],
                            },
                        }
                    }
                ],
                "properties": {
                    "fixable": row["fixable"],
                    "fixApplicability": row.get("fix_applicability"),
                },
                **({"fixes": [_sarif_fix(row, uri)]} if row.get("fix_edits") else {}),
            }
        )
    rules = [
        {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": rule.summary},
            "fullDescription": {"text": _first_paragraph(rule.docs)},
            "help": {"text": rule.docs, "markdown": rule.docs},
            "helpUri": HELP_URI.format(anchor=f"{rule.code.lower()}-{rule.name}"),
            "defaultConfiguration": {"level": _level(rule.code)},
            "properties": {"tags": _tags(rule.code)},
        }
        for rule in ALL_RULES
    ]
    invocation = {
        "executionSuccessful": not errors,
        "toolExecutionNotifications": [_notification(message, base) for message in errors],
    }
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "loopfix",
                        "version": __version__,
                        "semanticVersion": __version__,
                        "rules": rules,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": base.resolve().as_uri() + "/"}},
                "columnKind": "unicodeCodePoints",
                "invocations": [invocation],
                "results": results,
            }
        ],
    }


def repo_relative(path: str, base: Path) -> str:
    absolute = Path(os.path.abspath(path))
    try:
        return absolute.relative_to(base.resolve()).as_posix()
    except ValueError:
        return absolute.as_posix()


def _first_paragraph(docs: str) -> str:
    """The text of the "What it does" section (its paragraphs, lines joined)."""
    section = docs.split("## What it does", 1)[-1].split("\n## ", 1)[0]
    return " ".join(section.split())


def _tags(code: str) -> list[str]:
    kind = "crash" if code in CRASHING_RULES else "silent-bug"
    return ["pytorch", "autograd", "training-loop", kind]


def _sarif_fix(row: dict, uri: str) -> dict:
    replacements = [
        {
            "deletedRegion": {
                "startLine": edit["line"],
                "startColumn": edit["column"],
                "endLine": edit["end_line"],
                "endColumn": edit["end_column"],
            },
            "insertedContent": {"text": edit["text"]},
        }
        for edit in row["fix_edits"]
    ]
    return {
        "description": {"text": row["fix_title"] or "loopfix fix"},
        "artifactChanges": [
            {
                "artifactLocation": {"uri": uri, "uriBaseId": "%SRCROOT%"},
                "replacements": replacements,
            }
        ],
    }


ERROR_LOCATION = re.compile(r"^(?P<path>[^:]+?)(?::(?P<line>\d+))?(?::(?P<column>\d+))?: ")


def _notification(message: str, base: Path) -> dict:
    """A file that could not be read or parsed, as SARIF's tool notification."""
    notification = {"level": "error", "message": {"text": message}}
    match = ERROR_LOCATION.match(message)
    if match:
        location = {"artifactLocation": {"uri": repo_relative(match["path"], base)}}
        if match["line"]:
            location["region"] = {"startLine": int(match["line"])}
        notification["locations"] = [{"physicalLocation": location}]
    return notification


def github_error(message: str, base: Path) -> str:
    """`::error file=...::` for a file loopfix could not read or parse."""
    match = ERROR_LOCATION.match(message)
    if not match:
        return f"::error ::{_escape(message, False)}"
    properties = {"file": repo_relative(match["path"], base), "title": "loopfix"}
    if match["line"]:
        properties["line"] = match["line"]
    encoded = ",".join(f"{key}={_escape(str(value), True)}" for key, value in properties.items())
    return f"::error {encoded}::{_escape(message, False)}"


def github_annotation(row: dict, base: Path) -> str:
    """`::error file=...,line=...::message`, escaped as GitHub's workflow commands require;
    paths relative to the repository root, so annotations attach from any working folder."""
    properties = {
        "file": repo_relative(row["path"], base),
        "line": row["line"],
        "col": row["column"],
        "endLine": row["end_line"],
        "endColumn": row["end_column"],
        "title": f"{row['rule']} {row['name']}",
    }
    encoded = ",".join(f"{key}={_escape(str(value), True)}" for key, value in properties.items())
    return f"::{_level(row['rule'])} {encoded}::{_escape(row['message'], False)}"


def _escape(value: str, is_property: bool) -> str:
    value = value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if is_property:
        value = value.replace(":", "%3A").replace(",", "%2C")
    return value


def rules_markdown() -> str:
    """`docs/rules.md`: every rule's documentation under an anchor `lf00n-name` (the SARIF
    `helpUri` of each rule points there)."""
    parts = ["# loopfix rules\n\nGenerated from `loopfix explain`; one section per rule.\n"]
    for rule in ALL_RULES:
        docs = ("\n" + rule.docs).replace("\n## ", "\n### ").lstrip("\n")
        parts.append(f"\n## {rule.code} {rule.name}\n\n{rule.summary}.\n\n{docs}")
    return "".join(parts)


def verdict_row(path: str, verdict) -> dict:
    """A `verify` verdict as a row of the JSON report: `path`, `cell` (a notebook's, from 1)
    and `line` within it, or the file's line, as `check` gives them; `outcome` (the
    vocabulary word), `verdict` (it and what was seen), `compared` over `iterations` and
    `against` what (when not the plain original), what the `original` and `patched` runs
    did, `level`, `device`, `sandbox`, `seconds`, and whether `apply` writes the rewrite
    (`written`)."""
    cell, line = verdict.cell if verdict.cell is not None else (None, verdict.line)
    return {
        "path": path,
        **({"cell": cell} if cell is not None else {}),
        "line": line,
        "column": verdict.column,
        "rule": verdict.rule,
        "outcome": str(verdict.outcome),
        "verdict": verdict.verdict,
        "compared": verdict.compared,
        "iterations": verdict.iterations,
        "against": verdict.against,
        "original": verdict.original,
        "patched": verdict.patched,
        "level": verdict.level,
        "device": verdict.device,
        "sandbox": verdict.sandbox,
        "seconds": round(verdict.seconds, 3),
        "written": verdict.writable,
    }


def verdict_line(row: dict) -> str:
    """A verdict as `verify` prints it: one line, nothing cut."""
    cell = f"cell {row['cell']}:" if row.get("cell") is not None else ""
    where = f"{row['path']}:{cell}{row['line']}:{row['column']}"
    against = f", against {row['against']}" if row["against"] else ""
    compared = (
        f"compared {row['compared']} over {row['iterations']} iterations"
        if row["iterations"]
        else f"no iteration ran to compare {row['compared']}"
    )
    if not row["iterations"] and row["compared"].startswith("nothing"):  # no run made
        compared = "nothing compared" + row["compared"].removeprefix("nothing")
    return (
        f"{where}: {row['rule']} {row['verdict']} | {compared}{against} | original: "
        f"{row['original']} | patched: "
        f"{row['patched']} | {row['level']}, {row['device']}, {row['sandbox']}, "
        f"{row['seconds']:.1f} s"
    )


def verdicts_sarif(rows: list[dict], base: Path) -> dict:
    """`verify --format sarif`: one result per verdict, its message the verdict's line (from
    the verdict on), its level `note` for a rewrite `apply` writes and `warning` otherwise,
    and every field of the JSON row in its properties."""
    log = sarif([], base)
    log["runs"][0]["tool"]["driver"]["rules"] = [
        {key: rule[key] for key in ("id", "name", "shortDescription", "helpUri")}
        for rule in log["runs"][0]["tool"]["driver"]["rules"]
    ]
    index = {rule.code: number for number, rule in enumerate(ALL_RULES)}
    results = []
    for row in rows:
        region = {"startLine": row["line"], "startColumn": row["column"]}
        location = {"artifactLocation": {"uri": repo_relative(row["path"], base)}}
        location["artifactLocation"]["uriBaseId"] = "%SRCROOT%"
        results.append(
            {
                "ruleId": row["rule"],
                "ruleIndex": index[row["rule"]],
                "level": "note" if row["written"] else "warning",
                "message": {"text": verdict_line(row).split(": ", 1)[1]},
                "locations": [{"physicalLocation": {**location, "region": region}}],
                "properties": {k: v for k, v in row.items() if k not in ("path", "line")},
            }
        )
    log["runs"][0]["results"] = results
    return log
