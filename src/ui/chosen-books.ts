/** The books the person chose on the Read form and has not read yet, kept between visits (see choiceToKeep). */
const KEY = 'memagent-chosen-books';

/** The book ids kept, in reading order; none where nothing (or nothing readable) is kept. */
export function loadChosenBooks(storage: Pick<Storage, 'getItem'> = localStorage): string[] {
  try {
    const ids: unknown = JSON.parse(storage.getItem(KEY) ?? '[]');
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}

/** Keeps `ids` for the next visit, or forgets them with null. */
export function keepChosenBooks(ids: readonly string[] | null): void {
  if (ids) localStorage.setItem(KEY, JSON.stringify(ids));
  else localStorage.removeItem(KEY);
}
