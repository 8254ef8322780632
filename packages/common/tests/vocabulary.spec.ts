// The path tools' shared vocabulary: the errno map, file-operation cancellation, the name order.
import { FsError } from '@deepseek-ai/dsh-fs'
import { HarnessError } from '@deepseek-ai/dsh-llm'
import { describe, expect, it } from 'vitest'
import { checkFsAborted, compareNames, errnoOf, errnoReason, fsAborted, osError } from '../src/index.ts'

const sysError = (code: string) => Object.assign(new Error(`${code}: something, open '/x'`), { code })
const READ = { path: 'the path', during: 'while being read' }

describe('the errno map', () => {
  it('says what each code means for the subject, with its FsError code', () => {
    expect(errnoReason('ENAMETOOLONG', READ)).toEqual({ reason: 'a name in the path is too long', code: 'FS_IO_ERROR', known: true })
    expect(errnoReason('ELOOP', { path: 'it', during: 'during the listing' }).reason).toBe('it loops through symlinks')
    expect(errnoReason('EACCES', READ)).toEqual({ reason: 'permission denied', code: 'FS_PERMISSION_DENIED', known: true })
    expect(errnoReason('EPERM', READ).code).toBe('FS_PERMISSION_DENIED')
    expect(errnoReason('ENOENT', READ)).toEqual({ reason: 'it vanished while being read', code: 'FS_NOT_FOUND', known: true })
    expect(errnoReason('ENOENT', { path: 'it', during: 'during listing', it: '' }).reason).toBe('vanished during listing')
    expect(errnoReason('ENOTDIR', READ).reason).toBe('a part of the path is not a directory')
    expect(errnoReason('EIO', READ)).toEqual({ reason: 'EIO from the operating system', code: 'FS_IO_ERROR', known: false })
    // A key of Object.prototype is no errno.
    expect(errnoReason('constructor', READ).known).toBe(false)
  })

  it('turns only raw OS errors into FsErrors naming the subject; the host\'s errors pass as they are', () => {
    const wrapped = osError(sysError('EACCES'), 'cannot read "a.txt"', READ)
    expect(wrapped).toBeInstanceOf(FsError)
    expect((wrapped as FsError).message).toBe('cannot read "a.txt": permission denied')
    expect((wrapped as FsError).code).toBe('FS_PERMISSION_DENIED')
    const host = new FsError('file not found', 'FS_NOT_FOUND')
    expect(osError(host, 'x', READ)).toBe(host)
    const plain = new Error('boom')
    expect(osError(plain, 'x', READ)).toBe(plain)
    expect(errnoOf(new HarnessError('no', 'INVALID_ARGS'))).toBeUndefined()
    expect(errnoOf(null)).toBeUndefined()
    expect(errnoOf(sysError('ENOENT'))).toBe('ENOENT')
  })
})

describe('cancellation of a file operation', () => {
  it('is ctx.fs\'s FS_ABORTED, thrown only once the signal aborted', () => {
    expect(fsAborted('read')).toMatchObject({ message: 'read aborted', code: 'FS_ABORTED' })
    const controller = new AbortController()
    expect(() => { checkFsAborted(controller.signal, 'the listing was') }).not.toThrow()
    controller.abort()
    expect(() => { checkFsAborted(controller.signal, 'the listing was') }).toThrow('the listing was aborted')
  })
})

describe('the name order', () => {
  it('is the locale\'s, then code points for names it finds equal, so it is total', () => {
    const names = ['b', 'B', 'a', 'e\u0301', '\u00e9', '_x', '10', '9']
    const sorted = [...names].sort(compareNames)
    expect(sorted.indexOf('a')).toBeLessThan(sorted.indexOf('b'))
    // NFC and NFD forms: equal to the collator, ordered by code points, the same whatever the input order.
    expect(names.toReversed().sort(compareNames)).toEqual(sorted)
    expect(compareNames('e\u0301', '\u00e9')).toBe(-1)
    expect(compareNames('x', 'x')).toBe(0)
  })
})
