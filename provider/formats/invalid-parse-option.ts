import { typedError } from '../../domain/errors.ts';

/**
 * A parse option that cannot work (unknown format or query type, a bad legacy `fields` selection).
 * Thrown by the parse call itself, before any byte is read. Not retryable: the caller must fix it.
 */
export class InvalidParseOption extends typedError('final') {}
