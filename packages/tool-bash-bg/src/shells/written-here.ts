/** A background shell of another world (ctx.subprocess): its output reaches this host, which writes its log. */
import { rmSync } from 'node:fs'
import { dirname } from 'node:path'
import { noLog } from '../local/host-dir.ts'
import { LogWriter } from '../local/log-writer.ts'
import { closed } from './foreground.ts'
import type { ShellFiles, StartedCommand, StartedShell } from './world-types.ts'

/** The log is created first: no log, nothing starts. */
export function writtenHere(files: ShellFiles, start: () => StartedCommand): StartedShell {
  let writer: LogWriter
  try {
    writer = new LogWriter(files.log, files.maxLogBytes, files.toolName, files.streams)
  } catch (error) {
    throw noLog(files.toolName, dirname(files.log), (error as NodeJS.ErrnoException).code ?? String(error))
  }
  let started
  try {
    started = start()
  } catch (error) {
    writer.close()
    rmSync(files.log, { force: true })
    rmSync(files.streams, { force: true })
    throw error
  }
  const streams = [started.stdout, started.stderr]
  writer.attach(started.stdout, 'stdout')
  writer.attach(started.stderr, 'stderr')
  const log = Object.assign(writer, {
    drained: async (ms: number) => {
      const all = await closed(streams, ms)
      for (const stream of streams) stream.destroy()
      return all
    },
  })
  return { processes: started.processes, log, release: () => started.release() }
}
