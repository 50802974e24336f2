import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import './ui/i18n';
import { warmUpMarks } from './ui/inspector/useMarks';
import { Shell } from './ui/Shell';
import './ui/styles.css';

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <Shell />
  </StrictMode>,
);

warmUpMarks();
