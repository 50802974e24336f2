import { LlamaModels } from '../LlamaModels';
import { ModelManager } from '../ModelManager';
import { ModelStorage } from '../ModelStorage';
import { Page } from './Page';

/** Models that run on this device, and the storage they take. */
export function ModelsPage({ active }: { active: boolean }) {
  return (
    <Page
      place="models"
      active={active}
      title="Models"
      intro="Language models that run on this device: WebLLM on the graphics card, llama.cpp on the processor."
      className="models-page"
    >
      <ModelStorage />
      <div className="models-layout">
        <ModelManager />
        <LlamaModels active={active} />
      </div>
    </Page>
  );
}
