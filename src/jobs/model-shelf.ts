import type { ModelShelf } from '../engines/webllm/manager';
import type { Store } from '../storage/db';

/**
 * The shelf the worker hands the model managers: what they ask to keep (models
 * added by URL, speeds measured here) written by the store, the one writer of
 * the database.
 */
export function modelShelf(store: Promise<Store>): ModelShelf {
  return {
    customModels: async () => (await store).listCustomModels(),
    addCustomModel: async (spec) => (await store).putCustomModel({ ...spec, addedAt: Date.now() }),
    forgetCustomModel: async (id, modelId) => {
      const s = await store;
      await s.deleteCustomModel(id);
      await s.deleteSpeeds(modelId);
    },
    speeds: async () => (await store).listSpeeds(),
    speed: async (modelId, adapter) => (await store).getSpeed(modelId, adapter),
    keepSpeed: async (record) => (await store).putSpeed(record),
    keepSpeculation: async (modelId, adapter, speculation) => {
      const s = await store;
      const record = await s.getSpeed(modelId, adapter);
      if (!record) return false;
      await s.putSpeed({ ...record, speculation });
      return true;
    },
  };
}
