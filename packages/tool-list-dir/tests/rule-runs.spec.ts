/**
 * A large .gitignore as lookups and pattern runs (RuleRuns) decides every path as the `ignore` package given the whole
 * file does, and as git does: generated rule files of every kind (literal names and paths, endings, globs, negations,
 * directory-only), over generated paths whose parent directories no rule hides (the walk never enters those).
 */
import { execFileSync } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import fc from 'fast-check'
import ignore from 'ignore'
import { describe, expect, it } from 'vitest'
import { makeTmpDir, removeTmpDir } from '@gencode-ai/testkit'
import { RuleRuns } from '../src/filters/rule-runs.ts'

const NAMES = ['a', 'b.log', 'c.txt', 'build', 'x.gen', 'keep.log', '.env', 'tmp', 'a.b.log']
const DIRS = ['src', 'lib', 'src/deep']
const RULE = fc.oneof(
  fc.constantFrom(...NAMES), fc.constantFrom(...NAMES).map((name) => `/${name}`),
  fc.tuple(fc.constantFrom(...DIRS), fc.constantFrom(...NAMES)).map(([dir, name]) => `${dir}/${name}`),
  fc.constantFrom('*.log', '*.gen', '*.txt', '*g', '*.b.log', 'b*', '*.[lg]og', 'src/**/*.log', '?.txt', 'a\\.b', '**/tmp', 'c.*'),
)
const RULES = fc.array(fc.tuple(RULE, fc.boolean(), fc.boolean()).map(([rule, negative, dirOnly]) => `${negative ? '!' : ''}${rule}${dirOnly ? '/' : ''}`), { minLength: 1, maxLength: 40 })

const paths = DIRS.flatMap((dir) => NAMES.map((name) => `${dir}/${name}`)).concat(NAMES)

describe('RuleRuns', () => {
  it('decides as the ignore package does on the whole file, for files and directories', () => {
    fc.assert(fc.property(RULES, (rules) => {
      const text = rules.join('\n')
      const whole = ignore({ ignorecase: false }).add(text)
      const runs = new RuleRuns(rules)
      for (const path of paths) {
        // The walk never enters a hidden directory: only paths whose parents no rule hides are asked.
        const parents = path.split('/').slice(0, -1).map((_, index, all) => `${all.slice(0, index + 1).join('/')}/`)
        if (parents.some((parent) => whole.test(parent).ignored)) continue
        for (const asked of [path, `${path}/`]) {
          const { ignored, unignored } = whole.test(asked)
          expect({ text, asked, ...runs.test(asked) }).toEqual({ text, asked, ignored, unignored })
        }
      }
    }), { numRuns: 1500 })
  })

  it('agrees with git check-ignore on a 5,000-rule file', async () => {
    const root = await makeTmpDir('rule-runs-')
    try {
      execFileSync('git', ['init', '-q'], { cwd: root })
      const rules = Array.from({ length: 5000 }, (_, index) => [`gen${index}.js`, `/out/o${index}.js`, `*.e${index}`, `!keep${index}.js`, `d${index}/`][index % 5] as string)
      rules.push('*.log', '!important.log', 'src/**/x?.tmp', 'gen4995.js')
      writeFileSync(join(root, '.gitignore'), rules.join('\n'))
      mkdirSync(join(root, 'out'))
      mkdirSync(join(root, 'src/a'), { recursive: true })
      const files = ['gen0.js', 'gen5.js', 'gen4995.js', 'out/o1.js', 'out/o2.js', 'f.e2', 'f.e3', 'keep3.js', 'keep8.js', 'a.log', 'important.log',
        'src/a/x1.tmp', 'src/a/xx1.tmp', 'src/gen10.js', 'o1.js', 'd4', 'plain.txt']
      const answers = execFileSync('git', ['check-ignore', '--no-index', '-v', '-n', '--stdin'], { cwd: root, input: files.join('\n'), encoding: 'utf8' })
      const runs = new RuleRuns(rules)
      for (const line of answers.trim().split('\n')) {
        const [source, path] = line.split('\t') as [string, string]
        const ruleText = source.split(':').slice(2).join(':')
        const gitIgnores = source !== '::' && !ruleText.startsWith('!')
        expect({ path, ignored: runs.test(path).ignored }).toEqual({ path, ignored: gitIgnores })
      }
      expect(runs.patterns).toBe(1) // src/**/x?.tmp; the other 5,003 rules are lookups
    } finally {
      await removeTmpDir(root)
    }
  })
})
