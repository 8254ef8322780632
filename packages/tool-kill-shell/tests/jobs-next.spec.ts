// bash_bg and kill_shell on the host jobs of 0.1.7, which are not on the npm registry: a stand-in registry
// written from the 0.1.7-rc.2 source (zsagi1368/deepseek-harness-zDSH). Each shape names its source file.
import { afterEach, describe, expect, it } from 'vitest'
import { execTool, textOf } from '@gencode-ai/testkit'
import { bootKs, marker, pidsWithArgv0, startBg, until, type KsHost } from './harness.ts'

/** packages/jobs/jobs/src/types.ts: JobOutcome (`result`, not rc.8's `output`). */
interface JobOutcome { status: 'completed' | 'killed' | 'failed', detail?: string, result?: string }
/** packages/jobs/jobs/src/types.ts: JobSourceRead. */
interface JobSourceRead { text: string, nextOffset: number, lossy: boolean, spillPath?: string }
/** packages/jobs/jobs/src/types.ts: JobOutputSource (the subprocess `readFrom` family). */
interface JobOutputSource { channel?: 'stdout' | 'stderr' | 'log', read(fromByte: number): JobSourceRead }
/** packages/jobs/jobs/src/types.ts: JobHooks (no `readOutput` any more). */
interface JobHooks { cancel(reason?: string): void, done: Promise<JobOutcome> }
/** packages/jobs/jobs/src/types.ts: JobHandle. */
interface JobHandle { readonly id: string, append(text: string): void, updateProgress(line: string): void }
/** packages/jobs/jobs/src/types.ts: JobSpec (`owner` is a SessionId, a string). */
interface JobSpec {
  kind: string
  label: string
  owner?: string
  outputLimitBytes?: number
  output?: readonly JobOutputSource[]
  run(job: JobHandle): JobHooks
}
/** packages/jobs/jobs/src/view.ts: JobStatus and JobView. */
type JobStatus = 'running' | 'stopping' | 'completed' | 'killed' | 'failed'
interface JobView {
  readonly id: string
  readonly kind: string
  readonly label: string
  readonly owner?: string
  readonly status: JobStatus
  readonly detail?: string
  readonly startedAt: number
  readonly finishedAt?: number
  readonly output: { total: number, earliest: number, spillPaths?: readonly string[] }
}
/** packages/jobs/jobs/src/types.ts: JobRead. */
interface JobRead { chunks: readonly { at: number, text: string }[], lossy: boolean, result?: string, job: JobView }

type Job = {
  view: { -readonly [K in keyof JobView]: JobView[K] }
  spec: JobSpec
  hooks: JobHooks
  ring: string
  offsets: number[]
  cursor: number
  reasons: (string | undefined)[]
}

/**
 * The abstract JobRegistry of packages/jobs/jobs/src/index.ts, kept to what a producer and its tools meet:
 * start (controller preflight, owner fence), list/get/read/readAt/kill/wait/remove, attachController, events.
 * Sources are pumped on every read, as the registry's cadence would.
 */
class StandInJobs {
  readonly jobs = new Map<string, Job>()
  readonly kills: [string, unknown, string | undefined][] = []
  readonly events = { subscribe: () => () => {} }
  private controllers = 0
  private seq = 0

  attachController(): () => void {
    this.controllers++
    return () => { this.controllers-- }
  }

  start(spec: JobSpec): string {
    if (this.controllers === 0) throw new Error('background jobs unavailable: no job controller serves this agent (load @deepseek-ai/dsh-tool-jobs in its composition)')
    if (spec.owner !== undefined && typeof spec.owner !== 'string') throw new TypeError('0.1.7 takes the owner as a session id')
    const id = `${spec.kind}-${++this.seq}`
    const handle: JobHandle = { id, append: () => {}, updateProgress: () => {} }
    const hooks = spec.run(handle)
    const view: Job['view'] = {
      id, kind: spec.kind, label: spec.label, ...spec.owner === undefined ? {} : { owner: spec.owner },
      status: 'running', startedAt: Date.now(), output: { total: 0, earliest: 0 },
    }
    const job: Job = { view, spec, hooks, ring: '', offsets: (spec.output ?? []).map(() => 0), cursor: 0, reasons: [] }
    this.jobs.set(id, job)
    void hooks.done.then((outcome) => {
      this.pump(job)
      // A kill's 'stopping' may have been set meanwhile: read the field afresh.
      if (['running', 'stopping'].includes(view.status)) {
        view.status = outcome.status
        if (outcome.detail !== undefined) view.detail = outcome.detail
        view.finishedAt = Date.now()
      }
    })
    return id
  }

  private pump(job: Job): void {
    for (const [i, source] of (job.spec.output ?? []).entries()) {
      for (;;) {
        const read = source.read(job.offsets[i] ?? 0)
        if (read.nextOffset === job.offsets[i]) break
        job.ring += read.text
        job.offsets[i] = read.nextOffset
        if (read.spillPath !== undefined) job.view.output.spillPaths = [read.spillPath]
      }
    }
    job.view.output.total = Buffer.byteLength(job.ring)
  }

  private access(id: string, caller?: string): Job {
    const job = this.jobs.get(id)
    if (job === undefined) throw new Error(`unknown job ${id}`)
    if (job.view.owner !== undefined && job.view.owner !== caller) throw new Error(`job ${id} belongs to another session`)
    return job
  }

  list(caller?: string): JobView[] {
    const visible = [...this.jobs.values()].filter((job) => job.view.owner === undefined || job.view.owner === caller)
    return visible.map((job) => ({ ...job.view }))
  }

  get(id: string, caller?: string): JobView {
    return { ...this.access(id, caller).view }
  }

  read(id: string, caller?: string): JobRead {
    const job = this.access(id, caller)
    this.pump(job)
    const text = Buffer.from(job.ring).subarray(job.cursor).toString('utf8')
    const at = job.cursor
    job.cursor = Buffer.byteLength(job.ring)
    return { chunks: text === '' ? [] : [{ at, text }], lossy: false, job: { ...job.view } }
  }

  readAt(id: string, from: number, caller?: string): { chunks: { at: number, text: string }[], next: number, lossy: boolean } {
    const job = this.access(id, caller)
    this.pump(job)
    const text = Buffer.from(job.ring).subarray(from).toString('utf8')
    return { chunks: [{ at: from, text }], next: Buffer.byteLength(job.ring), lossy: false }
  }

  kill(id: string, caller?: string, reason?: string): 'requested' | 'already-finished' {
    const job = this.access(id, caller)
    this.kills.push([id, caller, reason])
    if (job.view.status !== 'running' && job.view.status !== 'stopping') return 'already-finished'
    job.hooks.cancel(reason)
    job.reasons.push(reason)
    job.view.status = 'stopping'
    return 'requested'
  }

  async wait(id: string, timeoutMs: number, caller?: string): Promise<JobView> {
    const job = this.access(id, caller)
    await Promise.race([job.hooks.done, new Promise((resolve) => setTimeout(resolve, timeoutMs))])
    await new Promise((resolve) => setImmediate(resolve))
    return { ...job.view }
  }

  remove(id: string, caller?: string): void {
    const job = this.access(id, caller)
    if (job.view.status === 'running' || job.view.status === 'stopping') throw new Error(`job ${id} is still live`)
    this.jobs.delete(id)
  }
}

let host: KsHost | undefined
afterEach(async () => { await host?.dispose(); host = undefined })

async function withNextJobs(config: { maxOutputBytes?: number } = {}): Promise<{ host: KsHost, jobs: StandInJobs }> {
  const jobs = new StandInJobs()
  const booted = await bootKs({
    jobRegistry: false,
    ...config.maxOutputBytes === undefined ? {} : { bashBg: { maxOutputBytes: config.maxOutputBytes } },
    before: async (h) => {
      h.ctx.provide('jobs', jobs as never)
      // dsh-tool-jobs attaches a controller in the real composition.
      jobs.attachController()
    },
  })
  return { host: booted, jobs }
}

describe('host jobs of 0.1.7 (stand-in from the 0.1.7-rc.2 types)', () => {
  it('bash_bg starts a job owned by the session id, with the log as a pull source; it settles with the exit code', async () => {
    const booted = await withNextJobs()
    host = booted.host
    const agent = host.agent()
    const bg = await startBg(host, 'echo one; echo two >&2; exit 3', agent)
    expect(bg.job_id).toBe('bash_bg-1')
    const job = booted.jobs.jobs.get('bash_bg-1')
    expect(job?.view.owner).toBe(agent.id)
    // One source per stream, so the host tags stderr itself (issue 30).
    expect(job?.spec.output?.map((source) => source.channel)).toEqual(['stdout', 'stderr'])
    expect(job?.hooks).not.toHaveProperty('readOutput')
    await host.shells.settled(bg.shell_id)
    const settled = await booted.jobs.wait('bash_bg-1', 5000, agent.id)
    expect(settled).toMatchObject({ status: 'completed', detail: 'exit code: 3', output: { spillPaths: [bg.output_file] } })
    expect(booted.jobs.read('bash_bg-1', agent.id).chunks.map((chunk) => chunk.text).join('')).toBe('one\ntwo\n')
    expect(job?.spec.output?.map((source) => source.read(0).text)).toEqual(['one\n', 'two\n'])
  })

  it('the pull source never splits a UTF-8 character across reads', async () => {
    const booted = await withNextJobs({ maxOutputBytes: 5 })
    host = booted.host
    const agent = host.agent()
    const bg = await startBg(host, "printf 'éééé€'", agent)
    await host.shells.settled(bg.shell_id)
    const source = booted.jobs.jobs.get(bg.job_id ?? '')?.spec.output?.[0]
    const first = source?.read(0)
    expect(first).toMatchObject({ text: 'éé', nextOffset: 4, lossy: false })
    expect(source?.read(4)).toMatchObject({ text: 'éé', nextOffset: 8 })
    expect(source?.read(8)).toMatchObject({ text: '€', nextOffset: 11 })
    expect(source?.read(11)).toMatchObject({ text: '', nextOffset: 11 })
  })

  it('kill_shell kills through the host with the session id as caller; the job ends killed', async () => {
    const booted = await withNextJobs()
    host = booted.host
    const agent = host.agent()
    const mark = marker('next')
    const bg = await startBg(host, `trap '' TERM; exec -a ${mark} sleep 60`, agent)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    const result = await execTool(host.ctx, 'kill_shell', { shell_id: bg.job_id, timeout: 200 }, { agent })
    expect(result.value).toMatchObject({ success: true, shell_id: bg.shell_id, outcome: 'force-killed', signal_sent: 'SIGTERM' })
    expect(result.value).toMatchObject({ timeout_ms: 200 })
    expect(booted.jobs.kills).toEqual([[bg.job_id, agent.id, 'kill_shell SIGTERM']])
    expect(pidsWithArgv0(mark)).toEqual([])
    expect(await booted.jobs.wait(bg.job_id ?? '', 5000, agent.id)).toMatchObject({ status: 'killed', detail: 'signal: SIGKILL' })
  })

  it('the host\'s bare kill (0.1.7 job_kill) is kill_shell\'s default; another session is refused', async () => {
    const booted = await withNextJobs()
    host = booted.host
    const agent = host.agent()
    const stranger = host.agent()
    const mark = marker('nextbare')
    const bg = await startBg(host, `exec -a ${mark} sleep 60`, agent)
    await until(() => pidsWithArgv0(mark).length === 1, 'the sleeper')
    const refused = await execTool(host.ctx, 'kill_shell', { shell_id: bg.shell_id }, { agent: stranger })
    expect(textOf(refused)).toBe(`Error: shell ${bg.shell_id} belongs to another session — only the session that started it can stop it`)
    expect(() => booted.jobs.kill(bg.job_id ?? '', stranger.id)).toThrow('belongs to another session')
    expect(booted.jobs.kill(bg.job_id ?? '', agent.id)).toBe('requested')
    expect(await host.shells.settled(bg.shell_id)).toMatchObject({ status: 'killed', signal: 'SIGTERM' })
    expect(pidsWithArgv0(mark)).toEqual([])
  })

  it('with no controller serving the agent, the shell runs on the registry alone', async () => {
    const booted = await withNextJobs()
    host = booted.host
    const jobs = booted.jobs as unknown as { controllers: number }
    jobs.controllers = 0
    const bg = await startBg(host, 'true', host.agent())
    expect(bg).not.toHaveProperty('job_id')
  })
})
