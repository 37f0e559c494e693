// metav1.Time accepts what Go's time.Parse(time.RFC3339, s) accepts; a bad value is reported the way
// Go reports it, naming the part of the layout that did not match.

const LAYOUT = '2006-01-02T15:04:05Z07:00';

interface Field {
  /** The layout element, as Go names it in "cannot parse … as …". */
  element: string;
  digits?: 1 | 2 | 4;
  literal?: string;
  range?: [number, number, string];
}

const FIELDS: Field[] = [
  { element: '2006', digits: 4 },
  { element: '-', literal: '-' },
  { element: '01', digits: 2, range: [1, 12, 'month'] },
  { element: '-', literal: '-' },
  { element: '02', digits: 2, range: [1, 31, 'day'] },
  { element: 'T', literal: 'T' },
  { element: '15', digits: 1, range: [0, 23, 'hour'] },
  { element: ':', literal: ':' },
  { element: '04', digits: 2, range: [0, 59, 'minute'] },
  { element: ':', literal: ':' },
  { element: '05', digits: 2, range: [0, 59, 'second'] },
];

const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';

function daysIn(month: number, year: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Checks an RFC 3339 timestamp; returns Go's error text, or undefined when the value parses. */
export function rfc3339Error(value: string): string | undefined {
  const quoted = JSON.stringify(value);
  const cannotParse = (rest: string, element: string) => `parsing time ${quoted} as "${LAYOUT}": cannot parse ${JSON.stringify(rest)} as "${element}"`;
  let pos = 0;
  const parsed: number[] = [];
  for (const field of FIELDS) {
    if (field.literal !== undefined) {
      if (value[pos] !== field.literal) return cannotParse(value.slice(pos), field.element);
      pos += 1;
      continue;
    }
    // Hours take one or two digits in Go's parser; every other numeric element has a fixed width.
    let width = field.digits ?? 2;
    if (field.digits === 1) width = isDigit(value[pos + 1]) ? 2 : 1;
    const text = value.slice(pos, pos + width);
    if (text.length !== width || ![...text].every(isDigit)) return cannotParse(value.slice(pos), field.element);
    const number = Number(text);
    if (field.range && (number < field.range[0] || number > field.range[1])) {
      return `parsing time ${quoted}: ${field.range[2]} out of range`;
    }
    parsed.push(number);
    pos += width;
  }
  const [year, month, day] = parsed as [number, number, number];
  if (day > daysIn(month, year)) return `parsing time ${quoted}: day out of range`;
  // Go accepts fractional seconds after the seconds field even when the layout does not name them.
  if ((value[pos] === '.' || value[pos] === ',') && isDigit(value[pos + 1])) {
    pos += 1;
    while (isDigit(value[pos])) pos += 1;
  }
  if (value[pos] === 'Z') {
    pos += 1;
  } else {
    const zone = value.slice(pos, pos + 6);
    const validZone =
      zone.length === 6 &&
      (zone[0] === '+' || zone[0] === '-') &&
      zone[3] === ':' &&
      isDigit(zone[1]) &&
      isDigit(zone[2]) &&
      isDigit(zone[4]) &&
      isDigit(zone[5]);
    if (!validZone) return cannotParse(value.slice(pos), 'Z07:00');
    if (Number(zone.slice(1, 3)) > 23 || Number(zone.slice(4, 6)) > 59) return `parsing time ${quoted}: time zone offset out of range`;
    pos += 6;
  }
  if (pos !== value.length) return `parsing time ${quoted}: extra text: ${JSON.stringify(value.slice(pos))}`;
  return undefined;
}
