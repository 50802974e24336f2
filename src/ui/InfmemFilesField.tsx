import { useCallback, useEffect, useId, useState } from 'react';
import { FilePicker } from './FilePicker';
import { useTranslation } from 'react-i18next';
import { defaultInfmemBase, INFMEM_FILES, type InfmemFileId } from '../core/infmem/official-files';
import type { InfmemFileStatus } from '../agent/protocol';
import { agent, call, onRunEvent } from './client';
import { i18n } from './i18n';
import type { Props } from './SettingFields';

const IDS: readonly InfmemFileId[] = ['infmem', 'fncall'];

const fileName = (id: InfmemFileId) => INFMEM_FILES[id].path.split('/').pop()!;

function describeFile(f: InfmemFileStatus): string {
  const name = fileName(f.id);
  if (f.have) {
    const when = f.savedAt ? `, ${new Intl.DateTimeFormat(i18n.language).format(f.savedAt)}` : '';
    const source = f.source?.startsWith('imported') ? f.source : i18n.t('prompts.fetchedFrom', { source: f.source });
    return i18n.t('prompts.fileHere', { name, sha: f.sha256.slice(0, 12), source, when });
  }
  return f.error ? i18n.t('infmemFiles.missingBecause', { name, error: f.error }) : i18n.t('infmemFiles.missing', { name });
}

/** One file's mirror: kept in the settings when the field is left or Enter is pressed. */
function MirrorField({ id, value, onSave }: { id: InfmemFileId; value: string; onSave(base: string): void }) {
  const { t } = useTranslation();
  const fieldId = useId();
  const [base, setBase] = useState(value);
  const save = () => {
    if (base.trim() !== value) onSave(base.trim());
  };
  return (
    <div className="field">
      <label htmlFor={fieldId}>{t('infmemFiles.mirror', { name: fileName(id) })}</label>
      <input
        id={fieldId}
        type="url"
        placeholder={defaultInfmemBase(INFMEM_FILES[id])}
        value={base}
        onChange={(e) => setBase(e.target.value)}
        onBlur={save}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            save();
          }
        }}
      />
    </div>
  );
}

/**
 * InfMem's two pinned files for a read with a model: whether each is here and
 * where from, and how to get them where the app cannot fetch them (offline, a
 * policy that blocks the host): fetch now, import a local copy, or a mirror
 * for each, as the command line's --prompts-file, --fncall-file,
 * --prompts-base and --fncall-base.
 */
export function InfmemFilesField({ settings, onChange }: Props) {
  const { t } = useTranslation();
  const [files, setFiles] = useState<InfmemFileStatus[] | null>(null);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const bases = settings.infmemBases;

  // The field keeps what it showed when the worker cannot answer; the next status refreshes it again.
  const refresh = useCallback(() => call(agent.infmemFiles()).then(setFiles, () => undefined), []);
  // A read fetches the files it needs: the field follows.
  useEffect(() => onRunEvent((e) => e.type === 'status' && void refresh()), [refresh]);

  // The worker fetches from the mirrors kept here; it learns them when the field shows and on each change.
  useEffect(() => {
    void Promise.all(IDS.map((id) => call(agent.setInfmemBase(id, bases[id]))))
      .catch((e: Error) => setMessage({ text: e.message, error: true }))
      .then(() => refresh());
  }, [bases, refresh]);

  const act = async (work: () => Promise<{ text: string; error: boolean }>) => {
    setBusy(true);
    setMessage(null);
    try {
      setMessage(await work());
      await refresh();
    } catch (e) {
      setMessage({ text: (e as Error).message, error: true });
    } finally {
      setBusy(false);
    }
  };

  const fetchNow = () =>
    act(async () => {
      const failed = (await call(agent.fetchInfmemFiles())).filter((f) => !f.have);
      return failed.length ? { text: failed.map(describeFile).join(' '), error: true } : { text: t('infmemFiles.bothHere'), error: false };
    });

  const importFile = (file: File) =>
    act(async () => {
      const id = await call(agent.importInfmemFile(file));
      return { text: t('infmemFiles.imported', { file: file.name, name: fileName(id) }), error: false };
    });

  const missing = files?.filter((f) => !f.have) ?? [];
  return (
    <section aria-label={t('infmemFiles.region')} className={missing.length ? 'warning' : undefined}>
      {/* What leaves the browser here, and why, said before the files' state: the book never does. */}
      <p className="hint">
        {t('infmemFiles.about', {
          infmem: `${INFMEM_FILES.infmem.repository} ${INFMEM_FILES.infmem.commit.slice(0, 7)}`,
          fncall: `${INFMEM_FILES.fncall.repository} ${INFMEM_FILES.fncall.commit.slice(0, 7)}`,
        })}
      </p>
      {files?.map((f) => (
        <p key={f.id} className="hint">
          {describeFile(f)}
        </p>
      ))}
      {missing.map((f) => (
        <p key={f.id} className="hint">
          {t('infmemFiles.how', { name: fileName(f.id) })} <code>{f.url}</code>
        </p>
      ))}
      <div className="row buttons">
        <button type="button" disabled={busy} onClick={() => void fetchNow()}>
          {t('infmemFiles.fetch')}
        </button>
        <FilePicker accept=".py,text/x-python,text/plain" disabled={busy} onFiles={([file]) => void importFile(file!)}>
          {t('infmemFiles.import')}
        </FilePicker>
      </div>
      {IDS.map((id) => (
        <MirrorField key={id} id={id} value={bases[id]} onSave={(base) => onChange({ infmemBases: { ...bases, [id]: base } })} />
      ))}
      {message && (
        <p role={message.error ? 'alert' : 'status'} className={message.error ? 'error' : 'hint'}>
          {message.text}
        </p>
      )}
    </section>
  );
}
