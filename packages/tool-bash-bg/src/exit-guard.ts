/**
 * No orphans when the host process ends. While the plugin is live it listens for `exit`,
 * SIGTERM and SIGINT; on each it kills every running shell synchronously and removes the log
 * directory. A signal is re-raised with its default action only when no other listener
 * handles it: a host that traps SIGINT (to cancel a turn, say) keeps its own behaviour, and
 * its shells die when it really exits.
 */

const SIGNALS = ['SIGTERM', 'SIGINT'] as const
/** Tags our listeners across module copies (HMR loads a fresh copy of this file). */
const OURS = Symbol.for('@gencode-ai/dsh-tool-bash-bg/exit-guard')

type Tagged = ((signal: NodeJS.Signals) => void) & { [OURS]?: true }

function foreignListeners(signal: NodeJS.Signals): number {
  return process.listeners(signal).filter((listener) => (listener as Tagged)[OURS] !== true).length
}

export function installExitGuard(cleanup: () => void): () => void {
  let done = false
  const once = () => {
    if (done) return
    done = true
    cleanup()
  }
  const onExit: Tagged = () => { once() }
  const onSignal: Tagged = (signal: NodeJS.Signals) => {
    if (foreignListeners(signal) > 0) return
    once()
    uninstall()
    // The last of our guards restores the default action: the process ends by this signal.
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal)
  }
  onExit[OURS] = true
  onSignal[OURS] = true
  process.on('exit', onExit)
  for (const signal of SIGNALS) process.on(signal, onSignal)
  function uninstall() {
    process.off('exit', onExit)
    for (const signal of SIGNALS) process.off(signal, onSignal)
  }
  return uninstall
}
