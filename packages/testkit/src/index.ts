// The test kit's exports: real DSH service boots, scripted model turns, tool calls, temp dirs, token counts.
export { bootServices, type ServicesOptions } from './services.ts'
export { bootHost, type Host, type HostOptions } from './host.ts'
export { ScriptedAdapter, textTurn, toolTurn, type ScriptEntry } from './scripted-adapter.ts'
export { runTurn, sessionEvents, toolResults, waitForIdle } from './agent.ts'
export { makeTmpDir, removeTmpDir } from './tmp.ts'
export { FilePersistence } from './persistence.ts'
export { execTool, textOf } from './execute.ts'
export { loopLateness } from './lateness.ts'
export {
  bootComposition, bundlePatch, hostRows,
  type Composition, type CompositionOptions, type LogRecord, type PatchLayer,
} from './loader.ts'
export { countTokens, promptCost } from './prompt-cost.ts'
