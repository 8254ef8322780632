import iconv from 'iconv-lite'
import { detectAll } from 'jschardet'
import { detect } from '../packages/tool-read/dist/detect.js'
for (const [enc, text] of [['gbk','// 中文注释\nint main(void) { return 0; }\n'], ['big5','中文\n'], ['shift_jis','日本語\n'], ['euc-kr', '한국어\n'], ['windows-1251', 'Привет, мир\n'], ['koi8-r', 'Привет, мир\n']]) { const b = iconv.encode(text, enc); console.log(enc, JSON.stringify(detect(b)), detectAll(b,{minimumThreshold:0.01}).slice(0,4).map(r=>`${r.encoding}:${r.confidence.toFixed(2)}`).join(' ')) }
