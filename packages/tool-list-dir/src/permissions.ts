/** `rwxr-xr-x` from st_mode's permission bits. */
export function permissionString(mode: number): string {
  let out = ''
  for (let shift = 6; shift >= 0; shift -= 3) {
    const bits = (mode >> shift) & 7
    out += (bits & 4 ? 'r' : '-') + (bits & 2 ? 'w' : '-') + (bits & 1 ? 'x' : '-')
  }
  return out
}
