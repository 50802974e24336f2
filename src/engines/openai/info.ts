import type { EngineInfo } from '../engine';

export const OPENAI_INFO: EngineInfo = {
  id: 'openai',
  label: 'OpenAI-compatible server',
  description: 'A model served over HTTP by vLLM, SGLang, llama.cpp or Ollama, on this machine or another. Enter its address and press Connect.',
  needsModel: true,
  // Qwen's vocabulary; the engine measures the server's own counts against it when it connects.
  standaloneTokenizer: true,
};
