/** The notebook room's sniff: a notebook is known by its name (its JSON is checked when read). */

import { extname } from 'node:path'

export const isNotebook = (path: string): boolean => extname(path).toLowerCase() === '.ipynb'
