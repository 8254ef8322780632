// bootHost: the real services on a temp dir plus a scripted model, for tests.
import type { Context } from '@deepseek-ai/cordis'
import { SessionId } from '@deepseek-ai/dsh-session'
import type { Agent } from '@deepseek-ai/dsh-agent'
import { ScriptedAdapter, type ScriptEntry } from './scripted-adapter.ts'
import { makeTmpDir, removeTmpDir } from './tmp.ts'
import { bootServices, type ServicesOptions } from './services.ts'

export interface HostOptions extends Omit<ServicesOptions, 'cwd'> {
  /** The fs provider's default cwd; a fresh temp dir when omitted. */
  cwd?: string
  /** The scripted model's turns; the agent loop is always mounted. */
  script?: ScriptEntry[]
  /** Whether the scripted model's route declares image input. */
  imageInput?: boolean
}

export interface Host {
  ctx: Context
  /** The provider's default cwd (a real temp dir unless given). */
  cwd: string
  adapter: ScriptedAdapter
  /** Create an agent whose session cwd is `cwd` (default: the host cwd). */
  agent(sessionCwd?: string, id?: string): Agent
  dispose(): Promise<void>
}

let agentSeq = 0

/** Boot the real DSH host services ({@link bootServices}) with a scripted model on the route `mock`. */
export async function bootHost(options: HostOptions = {}): Promise<Host> {
  const ownCwd = options.cwd === undefined
  const cwd = options.cwd ?? await makeTmpDir()
  const ctx = await bootServices({
    cwd,
    ...options.sandbox === undefined ? {} : { sandbox: options.sandbox },
    ...options.fileSystem === undefined ? {} : { fileSystem: options.fileSystem },
    ...options.jobRegistry === undefined ? {} : { jobRegistry: options.jobRegistry },
    ...options.persistence === undefined ? {} : { persistence: options.persistence },
  })
  const adapter = new ScriptedAdapter(options.script ?? [], options.imageInput ?? false)
  ctx.llm.registerAdapter(['mock'], adapter)
  return {
    ctx,
    cwd,
    adapter,
    agent(sessionCwd = cwd, id = `s${++agentSeq}`) {
      return ctx.agentLoop.create(SessionId(id), { provider: 'mock', model: 'mock' }, { cwd: sessionCwd })
    },
    async dispose() {
      await ctx.fiber.dispose()
      if (ownCwd) await removeTmpDir(cwd)
    },
  }
}
