// The code the four plugins share, bundled into each plugin's build (this package is never published).
export { aborted } from './abort.ts'
export { blanksAsAbsent } from './absent.ts'
export { formatBytes, IEC_UNITS, type ByteUnits } from './bytes.ts'
export { formatDuration } from './duration.ts'
export { echo, escapeName, fsPath, hasRawBytes, nameFromBytes, shownPath, unescapeName } from './escape.ts'
export { readsAreLocal } from './local-reads.ts'
export { quoted } from './quote.ts'
export { OutsideGate, OutsideWorkspace, place, type PathArgument, type Placement } from './workspace.ts'
