import { isU64 } from '../ids/u64.js';

export const MAX_PROCESSOR_TEXT = 200;

/**
 * Why a processor's subject or name cannot be registered, or null. A subject that is a UInt64 is
 * refused: a token with such a `sub` is read as a user token, which may never acknowledge.
 */
export function processorInputProblem(subject: string, name: string): { argument: 'subject' | 'name'; message: string } | null {
  if (subject === '' || subject.length > MAX_PROCESSOR_TEXT || /\s/.test(subject)) {
    return { argument: 'subject', message: `subject must be 1–${MAX_PROCESSOR_TEXT} characters without spaces` };
  }
  if (isU64(subject)) return { argument: 'subject', message: 'subject must not be a UInt64: a token with such a sub is a user token' };
  if (name.trim() === '' || name.length > MAX_PROCESSOR_TEXT)
    return { argument: 'name', message: `name must be 1–${MAX_PROCESSOR_TEXT} characters, not only spaces` };
  return null;
}
