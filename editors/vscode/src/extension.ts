// The loopfix extension for VS Code: starts `loopfix lsp` from the interpreter the user chose
// and adds commands over the server's own (`loopfix.verify`, `loopfix.diagnose`) and its
// `source.fixAll.loopfix` code action.
import { execFile } from "node:child_process";
import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  RevealOutputChannelOn,
  ServerOptions,
  State,
} from "vscode-languageclient/node";

const FIX_ALL = vscode.CodeActionKind.SourceFixAll.append("loopfix");
const SERVER_VERIFY = "loopfix.verify";
const SERVER_DIAGNOSE = "loopfix.diagnose";
const PYTHON_EXTENSION = "ms-python.python";

/** How the server is started, and why that way (shown in messages and the log). */
interface ServerCommand {
  command: string;
  args: string[];
  /** The interpreter or executable, as the user knows it. */
  shown: string;
  /** Where the choice came from: a setting, the Python extension, PATH. */
  origin: string;
  /** Whether `command` is a Python interpreter (`-m loopfix`) or the loopfix executable. */
  isPython: boolean;
}

/** The part of the Python extension's API used here (ms-python.python, `environments`). */
interface PythonApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { id: string; path: string };
    resolveEnvironment(
      environment: { id: string; path: string } | string,
    ): Promise<{ executable: { uri?: vscode.Uri } } | undefined>;
    onDidChangeActiveEnvironmentPath: vscode.Event<unknown>;
  };
}

let client: LanguageClient | undefined;
let output: vscode.LogOutputChannel;
let starting: Promise<void> | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("loopfix", { log: true });
  context.subscriptions.push(
    output,
    vscode.commands.registerCommand("loopfix.restart", () => restart()),
    vscode.commands.registerCommand("loopfix.showLogs", () => output.show()),
    vscode.commands.registerCommand("loopfix.fixAllFile", fixAll),
    vscode.commands.registerCommand("loopfix.verifyFile", verify),
    vscode.commands.registerCommand("loopfix.diagnoseFile", diagnose),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (
        event.affectsConfiguration("loopfix.path") ||
        event.affectsConfiguration("loopfix.interpreter")
      ) {
        await restart();
      } else if (event.affectsConfiguration("loopfix.settings") && client?.isRunning()) {
        const settings = serverSettings();
        if (Object.keys(settings).length === 0) {
          await restart(); // the server keeps its settings when sent none
        } else {
          await client.sendNotification("workspace/didChangeConfiguration", {
            settings: { loopfix: settings },
          });
        }
      }
    }),
  );
  const python = await pythonApi();
  if (python?.environments) {
    context.subscriptions.push(
      python.environments.onDidChangeActiveEnvironmentPath(async () => {
        if (!configured("path") && !configured("interpreter")) {
          await restart();
        }
      }),
    );
  }
  await restart();
}

export async function deactivate(): Promise<void> {
  await stop();
}

// -- choosing and starting the server -------------------------------------------------------

function config(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration("loopfix", vscode.workspace.workspaceFolders?.[0]);
}

function configured(key: "path" | "interpreter"): string {
  return substitute((config().get<string>(key) ?? "").trim());
}

/** `${workspaceFolder}`, `${userHome}` and a leading `~` in a path setting. */
function substitute(value: string): string {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? "";
  return value
    .replace(/\$\{workspaceFolder\}/g, folder)
    .replace(/\$\{userHome\}/g, os.homedir())
    .replace(/^~(?=$|[\\/])/, os.homedir());
}

function serverSettings(): Record<string, unknown> {
  const settings = config().get<Record<string, unknown>>("settings");
  return settings && typeof settings === "object" ? { ...settings } : {};
}

async function pythonApi(): Promise<PythonApi | undefined> {
  const extension = vscode.extensions.getExtension<PythonApi>(PYTHON_EXTENSION);
  if (!extension) {
    return undefined;
  }
  try {
    return extension.isActive ? extension.exports : await extension.activate();
  } catch (error) {
    output.warn(`the Python extension did not activate: ${error}`);
    return undefined;
  }
}

/** The Python extension's selected interpreter for the first workspace folder, if any. */
async function selectedPython(): Promise<string | undefined> {
  const environments = (await pythonApi())?.environments;
  if (!environments) {
    return undefined;
  }
  try {
    const active = environments.getActiveEnvironmentPath(vscode.workspace.workspaceFolders?.[0]?.uri);
    const resolved = await environments.resolveEnvironment(active);
    return resolved?.executable.uri?.fsPath ?? active.path;
  } catch (error) {
    output.warn(`could not read the Python extension's environment: ${error}`);
    return undefined;
  }
}

async function serverCommand(): Promise<ServerCommand> {
  const executable = configured("path");
  if (executable) {
    return { command: executable, args: ["lsp"], shown: executable, origin: "loopfix.path", isPython: false };
  }
  let python = configured("interpreter");
  let origin = "loopfix.interpreter";
  if (!python) {
    python = (await selectedPython()) ?? "";
    origin = "the Python extension's selected environment";
  }
  if (!python) {
    python = "python3";
    origin = "PATH";
  }
  return { command: python, args: ["-m", "loopfix", "lsp"], shown: python, origin, isPython: true };
}

/** `loopfix --version` from the chosen command: the version, or why it cannot start. */
function probe(server: ServerCommand): Promise<{ version?: string; problem?: string }> {
  const args = server.isPython ? ["-m", "loopfix", "--version"] : ["--version"];
  return new Promise((resolve) => {
    execFile(server.command, args, { timeout: 60_000, cwd: workspaceCwd() }, (error, stdout, stderr) => {
      if (!error) {
        resolve({ version: stdout.trim() });
        return;
      }
      const code = (error as NodeJS.ErrnoException).code;
      if (code === "ENOENT") {
        resolve({ problem: `${server.shown} was not found` });
        return;
      }
      const last = stderr.trim().split(/\r?\n/).pop() ?? "";
      resolve({ problem: last || error.message });
    });
  });
}

function workspaceCwd(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  if (running) {
    try {
      await running.stop();
    } catch (error) {
      output.warn(`stopping the server: ${error}`);
    }
    await running.dispose();
  }
}

function restart(): Promise<void> {
  const previous = starting ?? Promise.resolve();
  starting = previous.then(start, start);
  return starting;
}

async function start(): Promise<void> {
  await stop();
  const server = await serverCommand();
  output.info(`starting ${server.command} ${server.args.join(" ")} (from ${server.origin})`);
  const found = await probe(server);
  if (found.problem !== undefined) {
    output.error(`${server.shown}: ${found.problem}`);
    const where = server.isPython
      ? `the Python environment ${server.shown} (from ${server.origin})`
      : `${server.shown} (from ${server.origin})`;
    const install = server.isPython
      ? ` Install it there (\`${server.shown} -m pip install loopfix\`),`
      : "";
    void showStartError(
      `loopfix is not installed in ${where}.${install} or set "loopfix.interpreter" or ` +
        `"loopfix.path". (${found.problem})`,
    );
    return;
  }
  output.info(found.version ?? "");
  const serverOptions: ServerOptions = {
    command: server.command,
    args: server.args,
    options: { cwd: workspaceCwd() },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "python" },
      { scheme: "untitled", language: "python" },
      { scheme: "file", pattern: "**/pyproject.toml" },
    ],
    initializationOptions: serverSettings(),
    outputChannel: output,
    traceOutputChannel: output,
    revealOutputChannelOn: RevealOutputChannelOn.Never,
  };
  const created = new LanguageClient("loopfix", "loopfix", serverOptions, clientOptions);
  client = created;
  created.onDidChangeState((event) => {
    if (event.newState === State.Stopped && client === created) {
      output.warn("the server stopped");
    }
  });
  try {
    await created.start();
    output.info(`loopfix language server running (${found.version})`);
  } catch (error) {
    output.error(`the server did not start: ${error}`);
    void showStartError(`loopfix: the language server from ${server.shown} did not start: ${error}`);
  }
}

async function showStartError(message: string): Promise<void> {
  const choice = await vscode.window.showErrorMessage(message, "Open Settings", "Show Logs");
  if (choice === "Open Settings") {
    await vscode.commands.executeCommand("workbench.action.openSettings", "loopfix.");
  } else if (choice === "Show Logs") {
    output.show();
  }
}

// -- commands ---------------------------------------------------------------------------------

function pythonEditor(): vscode.TextEditor | undefined {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.languageId !== "python") {
    void vscode.window.showWarningMessage("loopfix: open a Python file first");
    return undefined;
  }
  return editor;
}

function runningClient(): LanguageClient | undefined {
  if (!client?.isRunning()) {
    void vscode.window.showErrorMessage(
      'loopfix: the language server is not running ("loopfix: Show logs" tells why)',
    );
    return undefined;
  }
  return client;
}

/** Applies the server's `source.fixAll.loopfix` action: exactly what `loopfix apply` writes. */
async function fixAll(): Promise<boolean> {
  const editor = pythonEditor();
  if (!editor || !runningClient()) {
    return false;
  }
  const document = editor.document;
  const whole = new vscode.Range(0, 0, document.lineCount, 0);
  const actions =
    (await vscode.commands.executeCommand<vscode.CodeAction[]>(
      "vscode.executeCodeActionProvider",
      document.uri,
      whole,
      FIX_ALL.value,
    )) ?? [];
  const action = actions.find((candidate) => candidate.kind && FIX_ALL.contains(candidate.kind));
  if (!action?.edit) {
    void vscode.window.showInformationMessage("loopfix: nothing to fix in this file");
    return false;
  }
  return vscode.workspace.applyEdit(action.edit);
}

/** Runs the server's `loopfix.verify` on the file: its verdicts come as a message. */
async function verify(): Promise<unknown> {
  const editor = pythonEditor();
  const running = runningClient();
  if (!editor || !running) {
    return undefined;
  }
  const uri = running.code2ProtocolConverter.asUri(editor.document.uri);
  const name = path.basename(editor.document.uri.fsPath);
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `loopfix: verifying the fixes in ${name}` },
    () => running.sendRequest(ExecuteCommandRequest.type, { command: SERVER_VERIFY, arguments: [uri] }),
  );
}

/** Runs the saved file as a script under `loopfix diagnose`; the explanation becomes
 * diagnostics at the lines it names. */
async function diagnose(): Promise<unknown> {
  const editor = pythonEditor();
  const running = runningClient();
  if (!editor || !running) {
    return undefined;
  }
  const document = editor.document;
  if (document.isUntitled) {
    void vscode.window.showWarningMessage("loopfix: save the script first (diagnose runs the file)");
    return undefined;
  }
  if (document.isDirty && !(await document.save())) {
    return undefined;
  }
  const uri = running.code2ProtocolConverter.asUri(document.uri);
  const name = path.basename(document.uri.fsPath);
  return vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `loopfix: running ${name}` },
    () => running.sendRequest(ExecuteCommandRequest.type, { command: SERVER_DIAGNOSE, arguments: [uri] }),
  );
}
