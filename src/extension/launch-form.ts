import * as vscode from 'vscode';
import { humanDuration, parseDuration } from '../core/scheduler/walltime.ts';
import type { Settings } from './settings.ts';

/** What "Swarm: Launch Swarm…" asks: the values a job template is filled from. */
export interface LaunchForm {
  scheduler: 'slurm' | 'pbs';
  engine: 'vllm' | 'sim' | 'sim-llama';
  nodes: number;
  serversPerNode: number;
  tensorParallel: number;
  model: string;
  walltime: string;
  queue: string;
  account: string;
  /** A template file (workspace-relative or absolute); empty: the shipped one for the scheduler. */
  template: string;
  vllmArgs: string;
  portBase: number;
}

export function formDefaults(s: Settings['launch']): LaunchForm {
  const { scheduler, engine, nodes, serversPerNode, tensorParallel, model, walltime, queue, account, template, vllmArgs, portBase } = s;
  return { scheduler, engine, nodes, serversPerNode, tensorParallel, model, walltime, queue, account, template, vllmArgs, portBase };
}

type Field = keyof LaunchForm;

interface FieldSpec {
  label: string;
  help: string;
  choices?: readonly string[];
  /** An error for a typed value, or undefined when it is fine. */
  check?: (v: string) => string | undefined;
}

const integer = (min: number, max: number) => (v: string) => (/^\d+$/.test(v.trim()) && +v >= min && +v <= max ? undefined : `an integer from ${min} to ${max}`);

const FIELDS: Record<Field, FieldSpec> = {
  scheduler: { label: 'Scheduler', help: 'PBS (Aurora) or Slurm', choices: ['pbs', 'slurm'] },
  engine: { label: 'Engine', help: 'vLLM, or the simulator (no GPU)', choices: ['vllm', 'sim', 'sim-llama'] },
  nodes: { label: 'Nodes', help: 'nodes to ask for', check: integer(1, 100_000) },
  serversPerNode: { label: 'Servers per node', help: 'one per GPU, or per tile on Aurora', check: integer(1, 1024) },
  tensorParallel: { label: 'Tensor parallel', help: "GPUs (tiles) per server: vLLM's --tensor-parallel-size", check: integer(1, 1024) },
  model: { label: 'Model', help: 'what the servers serve (simulator: sim-model when empty)' },
  walltime: { label: 'Walltime', help: 'HH:MM:SS or minutes', check: (v) => (parseDuration(v) !== undefined && parseDuration(v)! >= 60 ? undefined : 'HH:MM:SS, D-HH:MM:SS or minutes, at least a minute') },
  queue: { label: 'Queue / partition', help: "empty: the scheduler's default" },
  account: { label: 'Account / project', help: 'what the job is charged to' },
  template: { label: 'Job template', help: 'a script of your own ({{placeholders}}); empty: the shipped one' },
  vllmArgs: { label: 'Extra vLLM flags', help: 'split at spaces' },
  portBase: { label: 'Port base', help: 'port of the first server on each node', check: integer(1024, 65_535) },
};

const SUBMIT = '$(rocket) Submit';

/**
 * A form made of quick picks: one row per field with its value, Submit on top. Picking a field edits
 * it (a choice, or an input box that checks what is typed) and comes back here; Escape leaves.
 */
export async function launchForm(initial: LaunchForm, where: string): Promise<LaunchForm | undefined> {
  const form = { ...initial };
  for (;;) {
    const rows: Array<vscode.QuickPickItem & { field?: Field }> = [
      { label: SUBMIT, description: `${form.nodes} node(s) × ${form.serversPerNode} ${form.engine} server(s), walltime ${humanDuration(parseDuration(form.walltime) ?? 0)}`, detail: `submits through ${where}, waits for the servers, then connects` },
      { label: '', kind: vscode.QuickPickItemKind.Separator },
      ...(Object.keys(FIELDS) as Field[]).map((field) => ({ field, label: FIELDS[field].label, description: String(form[field]) || '(default)', detail: FIELDS[field].help })),
    ];
    const pick = await vscode.window.showQuickPick(rows, {
      title: 'Swarm: Launch Swarm',
      placeHolder: 'Pick a field to change it, or Submit',
      ignoreFocusOut: true,
      matchOnDescription: true,
    });
    if (!pick) return undefined;
    if (!pick.field) return form;
    const value = await edit(pick.field, String(form[pick.field]));
    if (value === undefined) continue;
    const numeric = typeof initial[pick.field] === 'number';
    (form as Record<Field, string | number>)[pick.field] = numeric ? Number(value) : value.trim();
  }
}

async function edit(field: Field, current: string): Promise<string | undefined> {
  const spec = FIELDS[field];
  if (spec.choices) return (await vscode.window.showQuickPick(spec.choices.map((c) => ({ label: c, picked: c === current })), { title: `Swarm: Launch Swarm — ${spec.label}` }))?.label;
  return vscode.window.showInputBox({ title: `Swarm: Launch Swarm — ${spec.label}`, prompt: spec.help, value: current, ignoreFocusOut: true, ...(spec.check ? { validateInput: spec.check } : {}) });
}
