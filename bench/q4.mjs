import iconv from 'iconv-lite'
import { detect } from '../packages/tool-read/dist/detect.js'
const russian = 'В гимназии он не был первым учеником, но учителя его любили за живой ум и доброе сердце. Каждое утро он шёл через старый парк, где под липами сидели старики и читали газеты. Летом семья уезжала в деревню, и там он целыми днями пропадал на реке, ловил рыбу и слушал рассказы деда о войне.\n'
const greek = 'Η Ελλάδα είναι μια χώρα της νοτιοανατολικής Ευρώπης με πλούσια ιστορία. Οι αρχαίοι φιλόσοφοι συζητούσαν στην αγορά της Αθήνας για τη δικαιοσύνη, την ομορφιά και την αλήθεια. Σήμερα οι επισκέπτες θαυμάζουν τα μνημεία και κολυμπούν στα καθαρά νερά του Αιγαίου.\n'
const hebrew = 'ירושלים היא עיר עתיקה ששימשה מרכז דתי ותרבותי במשך אלפי שנים. ברחובות העיר העתיקה אפשר לשמוע שפות רבות, ולראות אנשים מכל קצוות העולם. בערב השמש שוקעת מאחורי ההרים והאבנים מקבלות גוון זהוב.\n'
const czech = 'Praha je hlavní město České republiky a leží na řece Vltavě. Staré Město s orlojem a Karlův most přitahují každý rok miliony turistů. V zimě je ve městě klid, lidé pijí horký čaj v kavárnách a děti se kloužou na zamrzlých rybnících.\n'
const thai = 'ประเทศไทยเป็นประเทศในเอเชียตะวันออกเฉียงใต้ มีประวัติศาสตร์และวัฒนธรรมที่ยาวนาน อาหารไทยมีชื่อเสียงไปทั่วโลก เช่น ต้มยำกุ้งและผัดไทย ทุกปีนักท่องเที่ยวจำนวนมากมาเที่ยวชมวัดและชายหาดที่สวยงาม\n'
const cases = [['windows-1251', russian], ['koi8-r', russian], ['ibm866', russian], ['iso-8859-5', russian], ['ibm855', russian], ['maccyrillic', russian], ['iso-8859-7', greek], ['windows-1253', greek], ['windows-1255', hebrew], ['windows-1250', czech], ['iso-8859-2', czech], ['windows-874', thai], ['tis-620', thai]]
for (const [enc, text] of cases) {
  const b = iconv.encode(text.repeat(1), enc)
  const d = detect(b)
  const ok = d.kind === 'text' && iconv.decode(b, d.encoding) === text
  console.log(enc.padEnd(14), ok, JSON.stringify(d))
}
for (const enc of ['utf-16le', 'utf-16be', 'utf-32le', 'utf-32be']) for (const text of ['hello world, plain ASCII text in a file\nsecond line\n', russian, 'これは日本語のテキストです。文字コードの検出をテストします。\n']) { const b = iconv.encode(text, enc); console.log(enc, JSON.stringify(detect(b)), text.slice(0, 10)) }
