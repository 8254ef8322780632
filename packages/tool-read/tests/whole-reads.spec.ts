/** The budget whole-file reads share: admitted in order while they fit, one alone whatever its size, an abort leaves the queue. */
import { describe, expect, it } from 'vitest'
import { WholeReads } from '../src/whole-reads.ts'

const live = () => new AbortController().signal
const tick = () => new Promise((resolve) => setImmediate(resolve))

describe('WholeReads', () => {
  it('admits reads while they fit, then in arrival order as earlier ones end', async () => {
    const budget = new WholeReads(100) // 5 bytes of memory per byte of file: 20 bytes of files
    const first = await budget.hold(10, live())
    const order: string[] = []
    const second = budget.hold(10, live()).then((release) => { order.push('second'); return release })
    const third = budget.hold(1, live()).then((release) => { order.push('third'); return release })
    await tick()
    expect(order).toEqual(['second']) // 10 + 10 + 1 bytes of files pass the budget: the third waits
    ;(await second)()
    await tick()
    expect(order).toEqual(['second', 'third'])
    first()
    ;(await third)()
  })

  it('a read larger than the budget goes ahead alone', async () => {
    const budget = new WholeReads(100)
    const small = await budget.hold(1, live())
    let big: (() => void) | undefined
    void budget.hold(1000, live()).then((release) => { big = release })
    await tick()
    expect(big).toBeUndefined()
    small()
    small() // a second release changes nothing
    await tick()
    expect(big).toBeTypeOf('function')
    big!()
  })

  it('an abort ends the wait with FS_ABORTED, and the reads behind it move up', async () => {
    const budget = new WholeReads(100)
    const held = await budget.hold(20, live())
    const stop = new AbortController()
    const aborted = budget.hold(20, stop.signal)
    let next: (() => void) | undefined
    void budget.hold(20, live()).then((release) => { next = release })
    stop.abort()
    await expect(aborted).rejects.toMatchObject({ code: 'FS_ABORTED' })
    await expect(budget.hold(20, stop.signal)).rejects.toMatchObject({ code: 'FS_ABORTED' }) // aborted before it asked
    held()
    await tick()
    expect(next).toBeTypeOf('function')
    next!()
  })
})
