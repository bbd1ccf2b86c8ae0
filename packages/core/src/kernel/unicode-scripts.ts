/**
 * The Unicode scripts (long property value names of `Script`, Unicode 17), without `Common`, `Inherited` and
 * `Unknown`. `kernel/identity.ts` tells the script of a character by testing `\p{Script=<name>}`; a name the
 * running engine does not know is skipped (its characters are then unassigned there, which the username rule
 * refuses anyway).
 */
export const UNICODE_SCRIPTS = `
  Latin Greek Cyrillic Armenian Hebrew Arabic Syriac Thaana Nko Samaritan Mandaic Devanagari Bengali Gurmukhi
  Gujarati Oriya Tamil Telugu Kannada Malayalam Sinhala Thai Lao Tibetan Myanmar Georgian Hangul Ethiopic
  Cherokee Canadian_Aboriginal Ogham Runic Tagalog Hanunoo Buhid Tagbanwa Khmer Mongolian Limbu Tai_Le
  New_Tai_Lue Buginese Tai_Tham Balinese Sundanese Batak Lepcha Ol_Chiki Glagolitic Tifinagh Hiragana Katakana
  Bopomofo Han Yi Lisu Vai Bamum Syloti_Nagri Phags_Pa Saurashtra Kayah_Li Rejang Javanese Cham Tai_Viet
  Meetei_Mayek Linear_B Lycian Carian Old_Italic Gothic Old_Permic Ugaritic Old_Persian Deseret Shavian Osmanya
  Coptic Osage Elbasan Caucasian_Albanian Vithkuqi Linear_A Cypriot Imperial_Aramaic Palmyrene Nabataean Hatran
  Phoenician Lydian Meroitic_Hieroglyphs Meroitic_Cursive Kharoshthi Old_South_Arabian Old_North_Arabian
  Manichaean Avestan Inscriptional_Parthian Inscriptional_Pahlavi Psalter_Pahlavi Old_Turkic Old_Hungarian
  Hanifi_Rohingya Yezidi Old_Sogdian Sogdian Old_Uyghur Chorasmian Elymaic Brahmi Kaithi Sora_Sompeng Chakma
  Mahajani Sharada Khojki Multani Khudawadi Grantha Newa Tirhuta Siddham Modi Takri Ahom Dogra Warang_Citi
  Dives_Akuru Nandinagari Zanabazar_Square Soyombo Pau_Cin_Hau Bhaiksuki Marchen Masaram_Gondi Gunjala_Gondi
  Makasar Kawi Cuneiform Cypro_Minoan Egyptian_Hieroglyphs Anatolian_Hieroglyphs Mro Tangsa Bassa_Vah
  Pahawh_Hmong Medefaidrin Miao Tangut Nushu Khitan_Small_Script Duployan SignWriting Nyiakeng_Puachue_Hmong
  Toto Wancho Nag_Mundari Mende_Kikakui Adlam Braille Garay Gurung_Khema Kirat_Rai Ol_Onal Sunuwar Todhri
  Tulu_Tigalari Beria_Erfe Chisoi Sidetic Tai_Yo Tolong_Siki
`
  .trim()
  .split(/\s+/);
