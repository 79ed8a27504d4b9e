/**
 * @internal The small fittings every folder shares: how a value or a caught error reads in
 * a message, the promise test, a field read that names the field, an intrusive list, and
 * lossless JSON.
 */
export { describeValue } from './describe-value.js';
export { errorText } from './error-text.js';
export { isThenable } from './is-thenable.js';
export { quotedFieldError, readField, readQuotedField } from './read-field.js';
export { IntrusiveList, type ListNode } from './intrusive-list.js';
export { MAX_JSON_DEPTH, NotLosslessJsonError, snapshotJson, snapshotJsonLike, thawJson, type JsonObject, type JsonValue } from './lossless-json.js';
