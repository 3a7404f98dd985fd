import { StringDecoder } from 'node:string_decoder';
import { UnreadableInput } from '../../domain/errors.ts';

/** One top-level element of a JSON array: its exact text and the line where it starts (1-based). */
export interface JsonElement {
  readonly text: string;
  readonly line: number;
}

/** Largest element accepted; a larger one means the input is not a report (memory stays bounded). */
export const MAX_ELEMENT_CHARS = 16 * 1024 * 1024;

// Scanner states.
const BEFORE_ARRAY = 0;
const FIRST_VALUE = 1; // after '[': a value or ']'
const NEXT_VALUE = 2; // after ',': a value
const IN_VALUE = 3; // inside an element (object, array, string or scalar)
const AFTER_VALUE = 4; // after an element: ',' or ']'
const AFTER_ARRAY = 5; // after the closing ']': whitespace only

/**
 * Incremental splitter of a top-level JSON array into the texts of its elements, so that a report of
 * any size is read with memory bounded by one element: it tracks strings, escapes and nesting depth,
 * and counts newlines for line numbers. It does not validate the elements themselves (JSON.parse does
 * that per element); it does validate the array's own punctuation.
 *
 * An input that is empty or holds only whitespace yields nothing and reports `sawArray = false` to
 * the caller through {@link JsonArraySplitter.finish}.
 */
export class JsonArraySplitter {
  private readonly fileName: string;
  private state = BEFORE_ARRAY;
  private line = 1;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private scalar = false;
  private pieces: string[] = [];
  private pieceChars = 0;
  private startLine = 0;
  private sawArray = false;

  constructor(fileName: string) {
    this.fileName = fileName;
  }

  /** Feeds one chunk of text; returns the elements completed within it. */
  push(chunk: string): JsonElement[] {
    const out: JsonElement[] = [];
    let segStart = this.state === IN_VALUE ? 0 : -1;
    const n = chunk.length;
    // Next backslash at or after i (n when none), found once and reused while i stays before it.
    let nextBackslash = -1;
    for (let i = 0; i < n; i++) {
      if (this.state === IN_VALUE && this.inString) {
        if (this.escaped) {
          this.escaped = false; // this character is escaped
          continue;
        }
        // Jump to the next quote or backslash: strings are most of a report's bytes. A raw newline
        // cannot occur inside a JSON string, so none is counted here (JSON.parse refuses it anyway).
        if (nextBackslash < i) {
          nextBackslash = chunk.indexOf('\\', i);
          if (nextBackslash === -1) nextBackslash = n;
        }
        const quote = chunk.indexOf('"', i);
        const end = quote === -1 ? n : quote;
        if (nextBackslash < end) {
          i = nextBackslash;
          this.escaped = true;
          continue;
        }
        if (quote === -1) break;
        i = quote;
        this.inString = false;
        if (this.depth === 0) {
          this.emit(out, chunk.slice(segStart, i + 1));
          segStart = -1;
        }
        continue;
      }
      const c = chunk.charCodeAt(i);
      if (this.state === IN_VALUE) {
        if (this.scalar) {
          if (c === 44 /* , */ || c === 93 /* ] */ || c === 32 || c === 9 || c === 10 || c === 13) {
            this.emit(out, chunk.slice(segStart, i));
            segStart = -1;
            i--; // the delimiter is read again in AFTER_VALUE
          }
          continue;
        }
        if (c === 34) this.inString = true;
        else if (c === 123 /* { */ || c === 91 /* [ */) this.depth++;
        else if (c === 125 /* } */ || c === 93 /* ] */) {
          this.depth--;
          if (this.depth === 0) {
            this.emit(out, chunk.slice(segStart, i + 1));
            segStart = -1;
          }
        } else if (c === 10) this.line++;
        continue;
      }
      if (this.between(chunk, i, c)) segStart = i;
    }
    if (this.state === IN_VALUE && segStart >= 0) this.keep(chunk.slice(segStart));
    return out;
  }

  /**
   * The array's own punctuation and the white space between elements, character `c` at `i`: moves
   * the state on; true when an element starts at `i`.
   */
  private between(chunk: string, i: number, c: number): boolean {
    if (c === 10) {
      this.line++;
      return false;
    }
    if (c === 32 || c === 9 || c === 13 || (c === 0xfeff && this.state === BEFORE_ARRAY)) return false;
    switch (this.state) {
      case BEFORE_ARRAY:
        if (c !== 91) this.fail(`expected a JSON array ('[') but found ${describe(chunk, i)}`);
        this.sawArray = true;
        this.state = FIRST_VALUE;
        return false;
      case FIRST_VALUE:
      case NEXT_VALUE:
        if (c === 93 && this.state === FIRST_VALUE) {
          this.state = AFTER_ARRAY;
          return false;
        }
        if (c === 93 || c === 44) this.fail(`expected a value but found ${describe(chunk, i)}`);
        this.state = IN_VALUE;
        this.startLine = this.line;
        this.depth = c === 123 || c === 91 ? 1 : 0;
        this.inString = c === 34;
        this.scalar = !this.inString && this.depth === 0;
        return true;
      case AFTER_VALUE:
        if (c === 44) this.state = NEXT_VALUE;
        else if (c === 93) this.state = AFTER_ARRAY;
        else this.fail(`expected ',' or ']' after an element but found ${describe(chunk, i)}`);
        return false;
      default: // AFTER_ARRAY
        this.fail(`unexpected ${describe(chunk, i)} after the end of the array`);
    }
  }

  /** Keeps the start of an element that the next chunk ends, as long as it stays under the limit. */
  private keep(rest: string): void {
    this.pieces.push(rest);
    this.pieceChars += rest.length;
    if (this.pieceChars > MAX_ELEMENT_CHARS) {
      this.fail(
        `array element starting on line ${this.startLine} is longer than ${MAX_ELEMENT_CHARS} characters`,
      );
    }
  }

  /**
   * Ends the input and returns the last element, when a bare scalar ended it.
   * @throws UnreadableInput when the array is not closed (truncated input).
   */
  finish(): JsonElement[] {
    const out: JsonElement[] = [];
    if (this.state === IN_VALUE && this.scalar) this.emit(out, '');
    if (this.state !== AFTER_ARRAY && this.state !== BEFORE_ARRAY) {
      this.fail('the JSON array ends before it is closed (truncated input?)');
    }
    return out;
  }

  /** Whether the input began a JSON array (false for an empty or whitespace-only input). */
  get sawAnArray(): boolean {
    return this.sawArray;
  }

  private emit(out: JsonElement[], last: string): void {
    const text = this.pieces.length === 0 ? last : this.pieces.join('') + last;
    this.pieces = [];
    this.pieceChars = 0;
    this.state = AFTER_VALUE;
    this.scalar = false;
    out.push({ text, line: this.startLine });
  }

  private fail(reason: string): never {
    throw new UnreadableInput(this.fileName, this.line, reason);
  }
}

function describe(chunk: string, i: number): string {
  const shown = chunk.slice(i, i + 20).split('\n')[0] as string;
  return `'${shown}'`;
}

/**
 * Yields the elements of a top-level JSON array read from a byte stream, in batches (one per chunk).
 * @throws UnreadableInput for anything but an array (naming the line), a truncated array, or an
 *   empty input.
 */
export async function* splitJsonArray(
  input: AsyncIterable<Buffer | string>,
  fileName: string,
): AsyncGenerator<JsonElement[]> {
  const splitter = new JsonArraySplitter(fileName);
  const decoder = new StringDecoder('utf8');
  for await (const chunk of input) {
    const elements = splitter.push(typeof chunk === 'string' ? chunk : decoder.write(chunk));
    if (elements.length > 0) yield elements;
  }
  const tail = decoder.end();
  const last = [...(tail ? splitter.push(tail) : []), ...splitter.finish()];
  if (last.length > 0) yield last;
  if (!splitter.sawAnArray) {
    throw new UnreadableInput(
      fileName,
      null,
      'the file is empty: a JSON report is an array, and a report without records is []',
    );
  }
}
