/** The read_file tool: its parameters and value, and one call's flow (the step's budget, the read, an unchanged answer). */

import type { Context } from '@deepseek-ai/cordis'
import { FsVersion } from '@deepseek-ai/dsh-fs'
import { defineTool, type ToolDefinition, type ToolExecution } from '@deepseek-ai/dsh-tools'
import { blanksAsAbsent, echo, type OutsideGate, toolNamed, withRole } from '@gencode-ai/dsh-tool-common'
import { checkArgs, type ReadArgs } from './call/arguments.ts'
import { osError } from './call/errors.ts'
import { settle } from './call/settle.ts'
import type { Config } from './config.ts'
import { readAs } from './formats/pick.ts'
import { presentCall, presentationMeta, presentResult } from './present.ts'
import { renderValue, withGrowth } from './render.ts'
import { type Grant, shownBytes, StepBudget, withStep } from './session/step-budget.ts'
import { sessionView } from './session/surface.ts'
import { unchangedAnswer, windowKey, withIdentity } from './session/unchanged.ts'
import { Source } from './source.ts'
import { localPath, statRegular } from './target.ts'
import { VALUE_SCHEMA, type ReadValue } from './value.ts'

export function readFileTool(ctx: Context, config: Config, gate: OutsideGate): ToolDefinition {
  const budget = new StepBudget(config.maxBytesPerStep)

  /** The file read (or, with the step's budget spent, not read) into its value. */
  async function read(args: ReadArgs, exec: ToolExecution, grant: Grant, identify: boolean): Promise<ReadValue> {
    const options = { ...checkArgs(args, config), maxBytes: grant.bytes, mayBeEmpty: grant.mayBeEmpty }
    const { target, raw } = await settle(ctx, exec, args.file_path, gate, config)
    const listTool = toolNamed(ctx, exec, 'list', 'list_directory')
    try {
      const info = raw ? { version: FsVersion(''), type: 'file' as const } : await statRegular(ctx, exec, target, listTool)
      const source = await Source.open(ctx, exec, target, info, config.maxFileBytes, localPath(ctx, target), listTool)
      try {
        const { value: plain, observe } = await readAs({ source, call: { ctx, exec }, config, options })
        const value = withStep(identify ? withIdentity(plain, source.identity) : plain, grant)
        const grown = await source.grown()
        if (grown !== undefined && value.kind !== 'deferred' && value.kind !== 'unchanged') {
          return { ...value, grew: { from: source.info.size ?? 0, to: grown } }
        }
        // Record what the model has now seen, so dsh-tool-fs's write/edit accept a follow-up edit.
        if (observe && !raw) ctx.emit('fs/observed', target, { kind: 'present', version: info.version }, exec)
        return value
      } finally {
        await source.close()
      }
    } catch (error) {
      throw osError(error, echo(target.displayPath))
    }
  }

  const tool = defineTool({
    name: config.toolName,
    description: 'Read a file: numbered text lines (any encoding), PDF pages, images, .ipynb.',
    parameters: {
      file_path: { type: 'string', required: true, description: 'Absolute, or relative to the workspace.' },
      offset: { type: 'integer', description: '1-based first line (cell for .ipynb).' },
      limit: { type: 'integer', description: `Lines (cells) to read; default ${config.maxEntries}.` },
      encoding: { type: 'string', description: 'e.g. gbk; default: detected.' },
      pages: { type: 'string', description: 'PDF pages, e.g. "1-5,8"; default 1-10, max 20.' },
    },
    output: {
      schema: VALUE_SCHEMA,
      render: (_args, value) => withGrowth(renderValue(value), value),
      presentationMeta: (args, value) => presentationMeta(value, windowKey(args, config.maxEntries)),
    },
    // Reads change nothing; a racing write only makes a later guarded edit fail stale.
    isConcurrencySafe: () => true,
    async execute(args, exec) {
      // Before any await: parallel calls reserve their shares of the step's budget in the order the loop issued them.
      const view = sessionView(exec, config.toolName)
      const grant = budget.take(view?.step, config.maxBytes)
      const dedup = config.dedupUnchanged ? view : undefined
      try {
        const value = await read(args, exec, grant, dedup?.earlier !== undefined)
        const answer = dedup === undefined ? undefined : unchangedAnswer(dedup, windowKey(args, config.maxEntries), value)
        grant.settle(answer === undefined ? shownBytes(renderValue(value)) : 0)
        return answer ?? value
      } finally {
        grant.settle(0)
      }
    },
    presentCall,
    presentResult,
  })
  return withRole(blanksAsAbsent(tool, ['file_path']), 'read')
}
