import { type ReactNode, useRef } from 'react';
import './file-picker.css';

interface Props {
  /** The button's words: what choosing does ("Choose a book…", "Add books"). */
  children: ReactNode;
  /** The file types offered, as the input's `accept`. */
  accept: string;
  multiple?: boolean;
  onFiles(files: File[]): void;
  /** The input's id, for a `<label htmlFor>` beside it. */
  id?: string;
  /** The input's own name: what a file is given to (tests, and the system's dialog, fill the input). */
  label?: string;
  labelledBy?: string;
  /** What is chosen now, said by the button and the input alike. */
  describedBy?: string;
  /** The button is off (while something it would start is already under way). */
  disabled?: boolean;
}

/**
 * A file chooser drawn as the app's own button, the same in both themes: the
 * button opens the system's file dialog through the input behind it. The input
 * keeps its label (a file is given to it) but is out of the tab order and the
 * accessibility tree, so keyboard and screen reader meet one control, the button.
 */
export function FilePicker({ children, accept, multiple, onFiles, id, label, labelledBy, describedBy, disabled }: Props) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <span className="file-picker">
      <button type="button" disabled={disabled} aria-describedby={describedBy} onClick={() => input.current?.click()}>
        {children}
      </button>
      <input
        ref={input}
        id={id}
        type="file"
        className="visually-hidden"
        tabIndex={-1}
        aria-hidden="true"
        aria-label={label}
        aria-labelledby={labelledBy}
        aria-describedby={describedBy}
        accept={accept}
        multiple={multiple}
        onChange={(e) => {
          const files = [...(e.currentTarget.files ?? [])];
          // Emptied so that the same file may be chosen again.
          e.currentTarget.value = '';
          if (files.length) onFiles(files);
        }}
      />
    </span>
  );
}
