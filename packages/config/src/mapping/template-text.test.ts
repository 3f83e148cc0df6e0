import { parseTemplateText, placeholderText } from './template-text.js';

describe('parseTemplateText', () => {
  it.each<[string, unknown]>([
    ['', { parts: [] }],
    ['plain', { parts: ['plain'] }],
    ['{{a}}', { parts: [{ path: ['a'] }] }],
    ['x {{ a.b }} y', { parts: ['x ', { path: ['a', 'b'] }, ' y'] }],
    ['{{a}}{{b}}', { parts: [{ path: ['a'] }, { path: ['b'] }] }],
    ['}} {{a}}}}', { parts: ['}} ', { path: ['a'] }, '}}'] }],
    ['{{', { problems: ['has a {{ without a closing }} (at character 1)'] }],
    ['a {{}}', { problems: ['has an empty {{ }} (at character 3)'] }],
  ])('%j', (text, parsed) => {
    expect(parseTemplateText(text)).toEqual(parsed);
  });
});

describe('placeholderText', () => {
  it.each<[unknown, string]>([
    ['s', 's'],
    ['', ''],
    [1.5, '1.5'],
    [-0, '0'],
    [1e21, '1e+21'],
    [true, 'true'],
    [false, 'false'],
    [null, ''],
    [undefined, ''],
    [{ a: 1 }, ''],
    [[1], ''],
  ])('%j', (value, text) => {
    expect(placeholderText(value)).toBe(text);
  });
});
