/**
 * The trait key an audience's membership is delivered under: the snake_case form of its name
 * (docs/spec.md §5, `"Trial Users 2"` → `trial_users_2`). The rule, exactly:
 *
 * 1. Accents on Latin letters are dropped: NFKD, then the combining diacritical marks
 *    U+0300–U+036F that follow an ASCII letter are removed, then NFC (`Café` → `Cafe`). Other
 *    scripts keep their marks (`Йога`, `ザ`, `हिन्दी` stay as they are).
 * 2. A word starts at an upper-case letter that follows a lower-case letter or a digit
 *    (`trialUsers` → `trial Users`, `2FA` → `2 FA`), and at the last upper-case letter of a run
 *    that goes on in lower case (`HTMLParser` → `HTML Parser`).
 * 3. Lower case (locale-independent).
 * 4. Every run of characters that are not letters, combining marks or digits (any script)
 *    becomes one `_`; leading and trailing `_` are dropped.
 *
 * A name with no letter or digit has no key and is refused when the audience is saved.
 */
export function traitKey(name: string): string {
  const unaccented = name
    .normalize('NFKD')
    .replace(/([A-Za-z])[\u0300-\u036f]+/g, '$1')
    .normalize('NFC');
  const words = unaccented.replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2').replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2');
  return words
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}]+/gu, '_')
    .replace(/^_+|_+$/g, '');
}
