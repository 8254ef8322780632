// Byte counts as the tools print them: binary steps (1024), one decimal past the first unit.

/** The three unit names, smallest first: bytes, 1024 bytes, 1024² bytes. */
export type ByteUnits = readonly [string, string, string]

/** IEC names, as bash_bg and kill_shell print a log's size ('12.5 KiB'). */
export const IEC_UNITS: ByteUnits = ['B', 'KiB', 'MiB']

/** '512 B', '12.5 KiB', '3.0 MiB'; `units` names the steps (read_file keeps its documented 'bytes', 'KB', 'MB'). */
export function formatBytes(bytes: number, units: ByteUnits = IEC_UNITS): string {
  if (bytes < 1024) return `${bytes} ${units[0]}`
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} ${units[1]}`
  return `${(bytes / (1024 * 1024)).toFixed(1)} ${units[2]}`
}
