"""The language server end to end over stdio, driven by a real LSP client (pytest-lsp)."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

from corpus_cases import CORPUS, POSITIVE, UNSAFE

pytestmark = pytest.mark.asyncio
BUGGY = (CORPUS / "lf001_gru_state_init_once" / "before.py").read_text()
SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "loopfix", "lsp"])


def capabilities(pull: bool = False) -> types.ClientCapabilities:
    document = types.TextDocumentClientCapabilities(
        diagnostic=types.DiagnosticClientCapabilities() if pull else None,
        code_action=types.CodeActionClientCapabilities(),
    )
    window = types.WindowClientCapabilities(work_done_progress=True)
    return types.ClientCapabilities(text_document=document, window=window)


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path):
    params = types.InitializeParams(capabilities=capabilities(), root_uri=tmp_path.as_uri())
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


def utf16_offset(text: str, position: types.Position) -> int:
    """An independent reading of an LSP position (UTF-16 code units) as a text offset."""
    lines = text.splitlines(keepends=True)
    start = sum(len(line) for line in lines[: position.line])
    line = lines[position.line] if position.line < len(lines) else ""
    units = 0
    for index, character in enumerate(line):
        if units >= position.character:
            return start + index
        units += len(character.encode("utf-16-le")) // 2
    return start + len(line.rstrip("\r\n"))


def apply_text_edits(text: str, edits: list[types.TextEdit]) -> str:
    spans = [
        (utf16_offset(text, e.range.start), utf16_offset(text, e.range.end), e.new_text)
        for e in edits
    ]
    for start, end, new in sorted(spans, reverse=True):
        text = text[:start] + new + text[end:]
    return text


def open_document(
    client: LanguageClient, path: Path, text: str, version: int = 1, language: str = "python"
) -> str:
    uri = path.as_uri()
    item = types.TextDocumentItem(uri=uri, language_id=language, version=version, text=text)
    client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
    return uri


async def diagnostics_for(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    while uri not in client.diagnostics:
        await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    return list(client.diagnostics[uri])


async def actions_for(client, uri, diagnostics, only=None) -> list[types.CodeAction]:
    whole = types.Range(start=types.Position(0, 0), end=types.Position(100_000, 0))
    params = types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri),
        range=diagnostics[0].range if diagnostics else whole,
        context=types.CodeActionContext(diagnostics=diagnostics, only=only),
    )
    return await client.text_document_code_action_async(params) or []


async def test_every_positive_corpus_case_gets_its_diagnostics_and_the_cli_fix(
    client: LanguageClient, tmp_path
):
    for case in POSITIVE:
        path = tmp_path / f"{case.name}.py"
        text = case.before.read_text()
        client.diagnostics.pop(path.as_uri(), None)
        uri = open_document(client, path, text)
        found = await diagnostics_for(client, uri)
        assert sorted(d.code for d in found) == sorted(case.rules), case.name
        assert all(d.source == "loopfix" for d in found)
        actions = await actions_for(client, uri, found, only=["source.fixAll.loopfix"])
        (fix_all,) = actions
        fixed = apply_text_edits(text, fix_all.edit.changes[uri])
        assert fixed.encode() == case.after.read_bytes(), case.name  # what `apply` writes


async def test_a_quick_fix_is_attached_to_its_diagnostic(client: LanguageClient, tmp_path):
    case = CORPUS / "lf001_gru_state_init_once"
    text = (case / "before.py").read_text()
    uri = open_document(client, tmp_path / "train.py", text)
    (diagnostic,) = await diagnostics_for(client, uri)
    assert diagnostic.severity == types.DiagnosticSeverity.Error
    assert "hidden-state-not-detached" in diagnostic.message
    actions = await actions_for(client, uri, [diagnostic], only=[types.CodeActionKind.QuickFix])
    quick_fix, reset, disable = actions  # the detach (a stream's batches), the reset, noqa
    assert disable.title == "loopfix: Disable LF001 for this line"
    assert diagnostic.code_description.href.endswith(
        "docs/rules.md#lf001-hidden-state-not-detached"
    )
    assert reset.title.startswith("loopfix: Reset `h` at the start of each batch (LF001; unsafe")
    assert not reset.is_preferred
    assert quick_fix.kind == types.CodeActionKind.QuickFix and quick_fix.is_preferred
    assert quick_fix.diagnostics[0].code == "LF001"
    fixed = apply_text_edits(text, quick_fix.edit.changes[uri])
    assert fixed == (case / "after.py").read_text()


async def test_diagnostics_follow_incremental_changes(client: LanguageClient, tmp_path):
    case = CORPUS / "lf001_gru_state_init_once"
    text = (case / "before.py").read_text()
    uri = open_document(client, tmp_path / "train.py", text)
    (first,) = await diagnostics_for(client, uri)
    # insert three comment lines at the top: the diagnostic moves down three lines
    insert = types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(0, 0), end=types.Position(0, 0)),
        text="# one\n# two\n# three\n",
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[insert],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    (moved,) = client.diagnostics[uri]
    assert moved.range.start.line == first.range.start.line + 3
    # now type the fix the quick fix would make: the diagnostic goes away
    fixed = "# one\n# two\n# three\n" + (case / "after.py").read_text()
    whole = types.TextDocumentContentChangeWholeDocument(text=fixed)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=3),
            content_changes=[whole],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(client.diagnostics[uri]) == []


async def test_a_syntax_error_is_logged_and_the_server_keeps_serving(
    client: LanguageClient, tmp_path
):
    broken = open_document(client, tmp_path / "broken.py", "def oops(:\n    pass\n")
    assert await diagnostics_for(client, broken) == []
    assert any("syntax error" in m.message for m in client.log_messages)
    text = (CORPUS / "lf001_gru_state_init_once" / "before.py").read_text()
    good = open_document(client, tmp_path / "good.py", text)
    assert [d.code for d in await diagnostics_for(client, good)] == ["LF001"]


NON_ASCII = """\
import torch
import torch.nn as nn

gru, head = nn.GRU(3, 5), nn.Linear(5, 1)
optimizer = torch.optim.SGD([*gru.parameters(), *head.parameters()], lr=0.1)
état_𝛼 = torch.zeros(1, 2, 5)  # état caché ☃
for x in [torch.randn(4, 2, 3) for _ in range(3)]:
    sortie_é, état_𝛼 = gru(x, état_𝛼)  # 𝛼 is outside the BMP: two UTF-16 units
    loss = head(sortie_é).pow(2).mean()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""


async def test_positions_are_utf16_on_lines_with_non_ascii_text(client: LanguageClient, tmp_path):
    uri = open_document(client, tmp_path / "unicode.py", NON_ASCII)
    (diagnostic,) = await diagnostics_for(client, uri)
    line = NON_ASCII.splitlines()[diagnostic.range.start.line]
    start = utf16_offset(NON_ASCII, diagnostic.range.start)
    end = utf16_offset(NON_ASCII, diagnostic.range.end)
    assert "état_𝛼" in NON_ASCII[start:end] and "sortie_é" in line
    (action,) = await actions_for(client, uri, [diagnostic], only=["source.fixAll.loopfix"])
    fixed = apply_text_edits(NON_ASCII, action.edit.changes[uri])
    from loopfix.analysis import analyse_source
    from loopfix.source import SourceFile

    expected = analyse_source(SourceFile.from_bytes(Path("unicode.py"), NON_ASCII.encode()))
    assert fixed == expected.fixed_text and "état_𝛼.detach()" in fixed


async def test_settings_from_the_client_select_the_rules(client: LanguageClient, tmp_path):
    text = (CORPUS / "lf001_gru_state_init_once" / "before.py").read_text()
    uri = open_document(client, tmp_path / "train.py", text)
    assert len(await diagnostics_for(client, uri)) == 1
    settings = {"loopfix": {"ignore": ["LF001"]}}
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=settings))
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert list(client.diagnostics[uri]) == []


async def test_project_settings_come_from_tool_loopfix(client: LanguageClient, tmp_path):
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.loopfix]\nignore = ["LF001"]\n')
    text = (CORPUS / "lf001_gru_state_init_once" / "before.py").read_text()
    uri = open_document(client, tmp_path / "train.py", text)
    assert await diagnostics_for(client, uri) == []
    pyproject.write_text('[tool.loopfix]\nignore = ["LF004"]\n')  # edited meanwhile
    os.utime(pyproject, ns=(1, 2))  # a different modification time, however fast the test
    change = types.TextDocumentContentChangeWholeDocument(text=text + "\n")
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[change],
        )
    )
    await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    assert [d.code for d in client.diagnostics[uri]] == ["LF001"]


async def test_the_verify_command_reports_progress_and_a_verdict(client: LanguageClient, tmp_path):
    text = (CORPUS / "lf001_gru_state_init_once" / "before.py").read_text()
    uri = open_document(client, tmp_path / "train.py", text)
    await diagnostics_for(client, uri)
    params = types.ExecuteCommandParams(command="loopfix.verify", arguments=[uri])
    verify = asyncio.ensure_future(client.workspace_execute_command_async(params))
    # diagnostics keep flowing while verification runs
    other = open_document(client, tmp_path / "other.py", text.replace("hidden", "state"))
    assert [d.code for d in await diagnostics_for(client, other)] == ["LF001"]
    summary = await asyncio.wait_for(verify, timeout=300)
    assert "LF001" in summary and "equivalent" in summary
    (reports,) = client.progress_reports.values()
    assert [r.kind for r in reports] == ["begin", "report", "end"]
    assert any("equivalent" in m.message for m in client.messages)


async def test_the_diagnose_command_runs_the_file_and_marks_the_lines(
    client: LanguageClient, tmp_path
):
    """`loopfix.diagnose` runs the saved file as a script; the explanation arrives as an
    error at the failing backward and notes at the other lines it names."""
    text = (CORPUS / "lf002_gan_discriminator_to_device" / "before.py").read_text()
    path = tmp_path / "train.py"
    path.write_text(text)
    uri = open_document(client, path, text)
    await diagnostics_for(client, uri)
    params = types.ExecuteCommandParams(command="loopfix.diagnose", arguments=[uri])
    report = await asyncio.wait_for(client.workspace_execute_command_async(params), 300)
    assert report["status"] == "diagnosed"

    async def published():
        while not any(d.source == "loopfix diagnose" for d in client.diagnostics.get(uri, [])):
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    await asyncio.wait_for(published(), 60)
    ran = [d for d in client.diagnostics[uri] if d.source == "loopfix diagnose"]
    error = next(d for d in ran if d.severity == types.DiagnosticSeverity.Error)
    assert error.range.start.line == 24 and "`discriminator.weight`" in error.message
    assert {d.range.start.line for d in ran} >= {24, 21, 18}  # backward, step, forward
    assert any("loopfix diagnose:" in m.message for m in client.messages)


@pytest_lsp.fixture(config=SERVER)
async def pulling_client(lsp_client: LanguageClient, tmp_path):
    params = types.InitializeParams(capabilities=capabilities(pull=True))
    lsp_client.initialized_with = await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()


async def test_clients_that_pull_get_diagnostics_on_request(
    pulling_client: LanguageClient, tmp_path
):
    text = (CORPUS / "lf001_gru_state_init_once" / "before.py").read_text()
    uri = open_document(pulling_client, tmp_path / "train.py", text)
    report = await pulling_client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    assert [d.code for d in report.items] == ["LF001"]
    assert uri not in pulling_client.diagnostics  # nothing pushed as well


async def test_pulling_clients_are_told_that_findings_depend_on_other_files(
    pulling_client: LanguageClient,
):
    """Editing `models.py` changes what an open `train.py` that imports it gets: the server
    says so (`interFileDependencies`), and a pulling client (VS Code) then asks again for
    the other open documents when one changes."""
    provider = pulling_client.initialized_with.capabilities.diagnostic_provider
    assert provider.inter_file_dependencies is True


@pytest_lsp.fixture(config=SERVER)
async def utf8_client(lsp_client: LanguageClient, tmp_path):
    general = types.GeneralClientCapabilities(
        position_encodings=[types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16]
    )
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(general=general, window=capabilities().window)
    )
    result = await lsp_client.initialize_session(params)
    assert result.capabilities.position_encoding == types.PositionEncodingKind.Utf8
    yield
    await lsp_client.shutdown_session()


async def test_positions_follow_a_negotiated_utf8_encoding(utf8_client: LanguageClient, tmp_path):
    uri = open_document(utf8_client, tmp_path / "unicode.py", NON_ASCII)
    (diagnostic,) = await diagnostics_for(utf8_client, uri)
    line = NON_ASCII.splitlines()[diagnostic.range.start.line]
    start = line.index("état_𝛼")  # the state the loop carries, after `sortie_é, `
    assert diagnostic.range.start.character == len(line[:start].encode("utf-8")) == 15
    end = start + len("état_𝛼")  # é and 𝛼 are 2 and 4 bytes: 10 bytes, 6 characters
    assert diagnostic.range.end.character == len(line[:end].encode("utf-8")) == 25


GAN_MODELS = """\
import torch.nn as nn


class Gen(nn.Module):
    def __init__(self):
        super().__init__()
        self.l = nn.Linear(4, 4)

    def forward(self, z):
        return self.l(z)
"""

GAN_LOOP = """\
import torch
from models import Gen

netG, netD = Gen(), Gen()
opt_g = torch.optim.Adam(netG.parameters())
opt_d = torch.optim.Adam(netD.parameters())
for step in range(3):
    fake = netG(torch.randn(8, 4))
    d_out = netD(fake).mean()
    opt_d.zero_grad()
    d_out.backward(retain_graph=True)
    opt_d.step()
    opt_g.zero_grad()
    (-d_out).backward()
    opt_g.step()
"""


async def test_editing_an_open_module_republishes_the_documents_that_import_it(
    client: LanguageClient, tmp_path
):
    """`train.py` imports `Gen` from `models.py`: the unsaved buffer of `models.py` is what
    counts, and changing it re-publishes `train.py`'s diagnostics."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "models.py").write_text("")  # on disk: no Gen at all
    models = open_document(client, tmp_path / "models.py", GAN_MODELS)
    await diagnostics_for(client, models)
    train = open_document(client, tmp_path / "train.py", GAN_LOOP)
    (found,) = await diagnostics_for(client, train)
    assert found.code == "LF002"  # Gen is followed from the unsaved buffer
    # the class is renamed in the buffer: `Gen` no longer resolves, so nothing is claimed
    detached = GAN_MODELS.replace("class Gen(", "class Generator(")
    client.diagnostics.pop(train, None)
    change_whole(client, models, detached, version=2)
    assert await diagnostics_for(client, train) == []


async def test_editing_a_module_reached_through_another_republishes_its_importers(
    client: LanguageClient, tmp_path
):
    """`train.py` imports `Gen` from `nets.py`, which imports it from `models.py`: editing
    the buffer of `models.py` re-publishes `train.py`, and `nets.py` (parsed before, not
    edited) is linked again to the class as the buffer now has it."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "models.py").write_text("")
    (tmp_path / "nets.py").write_text("from models import Gen\n")
    models = open_document(client, tmp_path / "models.py", GAN_MODELS)
    await diagnostics_for(client, models)
    train = open_document(
        client, tmp_path / "train.py", GAN_LOOP.replace("from models", "from nets")
    )
    (found,) = await diagnostics_for(client, train)
    assert found.code == "LF002"
    renamed = GAN_MODELS.replace("class Gen(", "class Generator(")
    client.diagnostics.pop(train, None)
    change_whole(client, models, renamed, version=2)
    assert await diagnostics_for(client, train) == []


async def test_an_unsafe_fix_is_its_own_titled_quick_fix_and_never_in_fix_all(
    client: LanguageClient, tmp_path
):
    case = next(c for c in UNSAFE if c.name == "lf002_one_optimizer_two_steps")
    text = case.before.read_text()
    uri = open_document(client, tmp_path / "train.py", text)
    found = await diagnostics_for(client, uri)
    actions = await actions_for(client, uri, found, only=[types.CodeActionKind.QuickFix])
    actions = [a for a in actions if "Disable" not in a.title]
    titles = [a.title for a in actions]
    assert len(actions) == 2 and all("; unsafe fix: " in t for t in titles), titles
    assert not any(a.is_preferred for a in actions)
    assert titles[0].startswith("loopfix: Recompute ") and "Step once" in titles[1]
    fixed = apply_text_edits(text, actions[0].edit.changes[uri])
    assert fixed == case.after.read_text()  # what `apply --unsafe-fixes` writes
    assert await actions_for(client, uri, found, only=["source.fixAll.loopfix"]) == []


async def test_a_safe_fix_comes_with_the_unsafe_alternative_an_expert_might_prefer(
    client: LanguageClient, tmp_path
):
    case = next(c for c in POSITIVE if c.name == "lf002_gan_generator_reuses_d_output")
    text = case.before.read_text()
    uri = open_document(client, tmp_path / "gan.py", text)
    found = await diagnostics_for(client, uri)
    safe, recompute, _ = await actions_for(client, uri, found, only=[types.CodeActionKind.QuickFix])
    assert safe.is_preferred and "unsafe" not in safe.title
    assert apply_text_edits(text, safe.edit.changes[uri]) == case.after.read_text()
    assert recompute.title.startswith("loopfix: Recompute `output_fake = ")
    assert "unsafe fix: the later loss is built by a new forward" in recompute.title
    recomputed = apply_text_edits(text, recompute.edit.changes[uri])
    assert "optimizerG.zero_grad()\n    output_fake = netD(fake)\n    errG = " in recomputed


async def test_independent_batches_get_the_reset_first_and_the_detach_second(
    client: LanguageClient, tmp_path
):
    case = next(c for c in UNSAFE if c.name == "lf001_shuffled_loader_state_reset")
    text = case.before.read_text()
    uri = open_document(client, tmp_path / "classify.py", text)
    (diagnostic,) = await diagnostics_for(client, uri)
    assert "the batches are independent (`loader` is a DataLoader with shuffle=True)" in (
        diagnostic.message
    )
    reset, detach, _ = await actions_for(client, uri, [diagnostic], only=["quickfix"])
    assert "unsafe fix: `state` starts every batch from its initial value" in reset.title
    assert apply_text_edits(text, reset.edit.changes[uri]) == case.after.read_text()
    assert detach.title.startswith("loopfix: Detach `state`") and "unsafe" not in detach.title
    assert "state = tuple(s.detach() for s in state)" in apply_text_edits(
        text, detach.edit.changes[uri]
    )


async def test_disable_for_this_line_adds_a_noqa_comment(client: LanguageClient, tmp_path):
    case = CORPUS / "lf001_gru_state_init_once"
    text = (case / "before.py").read_text()
    uri = open_document(client, tmp_path / "train.py", text)
    (diagnostic,) = await diagnostics_for(client, uri)
    actions = await actions_for(client, uri, [diagnostic], only=[types.CodeActionKind.QuickFix])
    (disable,) = [a for a in actions if a.title == "loopfix: Disable LF001 for this line"]
    disabled = apply_text_edits(text, disable.edit.changes[uri])
    line = disabled.splitlines()[diagnostic.range.start.line]
    assert line.endswith("  # noqa: LF001") and line.startswith(text.splitlines()[15])


async def test_a_settings_error_is_shown_once_and_the_defaults_apply(
    client: LanguageClient, tmp_path
):
    (tmp_path / "pyproject.toml").write_text('[tool.loopfix]\nselect = ["XX9"]\n')
    text = (CORPUS / "lf001_gru_state_init_once" / "before.py").read_text()
    for name in ("a.py", "b.py"):
        uri = open_document(client, tmp_path / name, text)
        (diagnostic,) = await diagnostics_for(client, uri)
        assert diagnostic.code == "LF001"  # the defaults: every rule
    shown = [m.message for m in client.messages if "unknown rule code" in m.message]
    assert len(shown) == 1 and "pyproject.toml" in shown[0]
    assert shown[0].endswith("(using the defaults)")


BAD_SETTINGS = """\
[project]
name = "demo"

[tool.loopfix]
ignore = ["LF004"]
select = ["XX9"]

[tool.ruff]
select = ["E"]
"""


async def published(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    """The next diagnostics published for `uri` (popped from the client before the change)."""
    while uri not in client.diagnostics:
        notification = client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        await asyncio.wait_for(notification, timeout=30)
    return list(client.diagnostics[uri])


def change_whole(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.diagnostics.pop(uri, None)
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )


async def test_an_open_pyproject_shows_its_settings_error_on_the_key(
    client: LanguageClient, tmp_path
):
    """The error sits on `select` in `[tool.loopfix]` (not `[tool.ruff]`'s), follows the
    buffer as it is edited, and saving the file applies its settings to the open documents."""
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(BAD_SETTINGS)
    train = open_document(client, tmp_path / "train.py", BUGGY)
    assert [d.code for d in await diagnostics_for(client, train)] == ["LF001"]  # the defaults
    settings = open_document(client, pyproject, BAD_SETTINGS, language="toml")
    (error,) = await published(client, settings)
    assert error.source == "loopfix" and error.severity == types.DiagnosticSeverity.Error
    assert error.range.start == types.Position(line=5, character=0)
    assert error.range.end == types.Position(line=5, character=len("select"))
    assert error.message.startswith("[tool.loopfix] select: unknown rule code 'XX9'")
    # typing the fix clears it; the disk still has the error, so train.py is as it was
    fixed = BAD_SETTINGS.replace('"XX9"', '"LF002"')
    change_whole(client, settings, fixed, version=2)
    assert await published(client, settings) == []
    # saved: train.py is analysed again with the file's settings (only LF002: no finding)
    pyproject.write_text(fixed)
    os.utime(pyproject, ns=(1, 2))  # a different modification time, however fast the test
    client.diagnostics.pop(train)
    client.diagnostics.pop(settings)
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=settings))
    )
    assert await published(client, train) == []
    assert await published(client, settings) == []
    # a key loopfix does not know, then the file closed: its diagnostic goes with it
    change_whole(client, settings, fixed.replace("ignore =", "ignores ="), version=3)
    (unknown,) = await published(client, settings)
    assert unknown.range.start.line == 4 and unknown.message.startswith(
        "[tool.loopfix] ignores: unknown key (known: cache-dir,"
    )
    client.diagnostics.pop(settings)
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=settings))
    )
    assert await published(client, settings) == []


async def test_a_pulling_client_gets_the_pyproject_settings_error(
    pulling_client: LanguageClient, tmp_path
):
    broken = '[tool.loopfix]\ntimeout = "soon"\n'
    uri = open_document(pulling_client, tmp_path / "pyproject.toml", broken, language="toml")
    report = await pulling_client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=uri))
    )
    (error,) = report.items
    assert error.range.start.line == 1 and "timeout: must be a positive number" in error.message


@pytest.mark.parametrize(
    ("text", "marked"),
    [
        ('[tool.loopfix]\n"timeout" = -1\n', '"timeout"'),  # a quoted key
        ('[tool.loopfix.per-file-ignores]\n"a/*" = ["ZZ1"]\n', "[tool.loopfix.per-file-ignores]"),
        ('[tool.loopfix]\nper-file-ignores."a/*" = ["ZZ1"]\n', "per-file-ignores"),
        ('[ tool . "loopfix" ]  # ours\n  unsafe-fixes = "yes"\n', "unsafe-fixes"),
        ('[tool]\nloopfix = { device = "tpu" }\n', "loopfix"),  # no table header: the name
        ('[tool.loopfix]\nselect = ["LF"]\n[tool.x]\nbad = ]\nselect = 1\n', "bad = ]"),
        ('[tool.x]\nselect = ["XX9"]\n[tool.loopfix]\nselect = ["XX9"]\n', "select"),
    ],
)
async def test_a_settings_error_is_marked_where_the_file_has_it(text: str, marked: str):
    from loopfix.lsp.features import settings_diagnostics

    (error,) = settings_diagnostics(text, types.PositionEncodingKind.Utf16)
    start, end = utf16_offset(text, error.range.start), utf16_offset(text, error.range.end)
    assert text[start:end] == marked and start == text.rindex(marked)  # the last, if two
