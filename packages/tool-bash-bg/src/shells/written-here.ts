/**
 * A shell whose output reaches this host, which writes its log: another world's (ctx.subprocess), or a local foreground
 * run moved to the background at its timeout. Neither can outlive the host.
 */
import { rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { noLog } from '../local/host-dir.ts'
import { LogWriter } from '../local/log-writer.ts'
import { closed } from './foreground.ts'
import type { ShellFiles, StartedCommand, StartedShell } from './world-types.ts'

/** A new log of ours at `files.log` (and its sidecar), or the LOG_UNAVAILABLE error: no log, nothing starts. */
export function hostLog(files: Pick<ShellFiles, 'log' | 'maxLogBytes' | 'toolName' | 'streams' | 'pieces'>): LogWriter {
  try {
    return new LogWriter(files.log, files.maxLogBytes, files.toolName, files.streams, files.pieces === true)
  } catch (error) {
    throw noLog(files.toolName, dirname(files.log), (error as NodeJS.ErrnoException).code ?? String(error))
  }
}

/** A started command as a background shell: its processes, and `writer` (attached to its streams) as its log. */
export function hostWritten(started: StartedCommand, writer: LogWriter): StartedShell {
  const streams = [started.stdout, started.stderr]
  const log = Object.assign(writer, {
    drained: async (ms: number) => {
      const all = await closed(streams, ms)
      for (const stream of streams) stream.destroy()
      return all
    },
  })
  return { processes: started.processes, log, release: () => started.release() }
}

/** The log is created first: no log, nothing starts. */
export function writtenHere(files: ShellFiles, start: () => StartedCommand): StartedShell {
  const writer = hostLog(files)
  let started
  try {
    started = start()
  } catch (error) {
    writer.close()
    rmSync(files.log, { force: true })
    rmSync(files.streams, { force: true })
    throw error
  }
  writer.attach(started.stdout, 'stdout')
  writer.attach(started.stderr, 'stderr')
  return hostWritten(started, writer)
}
