// Durations as the tools print them: compact ('3s', '5m12s', '1h02m'), to a tenth ('2.5s'), or coarse ('5 min').

/**
 * `ms` as a duration, never negative. Compact: whole seconds below a minute, then minutes and seconds, then
 * hours and minutes. Tenths: the same, but below a minute a tenth is shown when there is one (kill_shell's
 * card). Coarse: the largest whole unit in words, as the /tasks table's Started column reads ('30 sec', '3 h').
 */
export function formatDuration(ms: number, style: 'compact' | 'tenths' | 'coarse' = 'compact'): string {
  const s = Math.max(0, Math.floor(ms / 1000))
  if (style === 'coarse') {
    if (s < 60) return `${s} sec`
    return s < 3600 ? `${Math.floor(s / 60)} min` : `${Math.floor(s / 3600)} h`
  }
  const tenths = Math.max(0, Math.round(ms / 100))
  if (style === 'tenths' && tenths < 600) return tenths % 10 === 0 ? `${tenths / 10}s` : `${(tenths / 10).toFixed(1)}s`
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`
}
