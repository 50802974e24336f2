import type { SpeedRecord, CustomModelRecord } from './model-schema';
import { Connection } from './connection';

/** Models added by URL, and models' measured speeds by device. */
export class Models extends Connection {
  /** Models added by URL, oldest first. */
  listCustomModels(): Promise<CustomModelRecord[]> {
    return this.read('the models added by URL', async () => (await this.db.getAll('customModels')).sort((a, b) => a.addedAt - b.addedAt));
  }

  putCustomModel(model: CustomModelRecord): Promise<void> {
    return this.guard(`the model "${model.label}"`, async () => {
      await this.db.put('customModels', model);
    });
  }

  deleteCustomModel(id: string): Promise<void> {
    return this.guard('the deletion of the model', async () => {
      await this.db.delete('customModels', id);
    });
  }

  /** A model's measured speed on the device `adapter` names, if it was measured there; `modelId` is its `modelKey`. */
  getSpeed(modelId: string, adapter: string): Promise<SpeedRecord | undefined> {
    return this.read("the model's measured speed", () => this.db.get('calibrations', [modelId, adapter]));
  }

  /** Every measured speed, of every engine, on whatever device. */
  listSpeeds(): Promise<SpeedRecord[]> {
    return this.read('the measured model speeds', () => this.db.getAll('calibrations'));
  }

  putSpeed(record: SpeedRecord): Promise<void> {
    return this.guard("the model's measured speed", async () => {
      await this.db.put('calibrations', record);
    });
  }

  /** Forgets a model's measured speeds on every device (a custom model removed: its id may name another model later). */
  deleteSpeeds(modelId: string): Promise<void> {
    return this.guard("the deletion of the model's measured speeds", async () => {
      // Adapters are strings, and arrays sort after every string: this range holds all of the model's keys.
      await this.db.delete('calibrations', IDBKeyRange.bound([modelId, ''], [modelId, []]));
    });
  }
}
