import { type DragEvent, useState } from 'react';

/**
 * Files dragged over the page: whether a drop target shows, and the page's
 * drag handlers. Enter and leave come for every element crossed, so they are
 * counted; a drop hands its files to `onFiles`.
 */
export function useFileDrop(onFiles: (files: File[]) => void) {
  const [dragging, setDragging] = useState(0);
  const carriesFiles = (e: DragEvent) => e.dataTransfer.types.includes('Files');
  return {
    dragging: dragging > 0,
    handlers: {
      onDragOver: (e: DragEvent) => e.preventDefault(),
      onDragEnter: (e: DragEvent) => {
        if (carriesFiles(e)) setDragging((n) => n + 1);
      },
      onDragLeave: (e: DragEvent) => {
        if (carriesFiles(e)) setDragging((n) => Math.max(0, n - 1));
      },
      onDrop: (e: DragEvent) => {
        e.preventDefault();
        setDragging(0);
        const files = [...e.dataTransfer.files];
        if (files.length > 0) onFiles(files);
      },
    },
  };
}
