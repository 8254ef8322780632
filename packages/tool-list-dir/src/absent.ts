/**
 * Models send an optional argument they mean to leave out as `""` or `null`: such a key is
 * dropped before the schema check, so only a present, wrong value is an error. `path` is
 * required and kept as sent.
 */
export function dropAbsent(args: unknown): unknown {
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return args
  const entries = Object.entries(args)
  if (!entries.some(([key, value]) => key !== 'path' && (value === '' || value === null))) return args
  return Object.fromEntries(entries.filter(([key, value]) => key === 'path' || (value !== '' && value !== null)))
}
