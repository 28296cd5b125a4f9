r"""The formula each metric page shows (LaTeX for Sphinx's ``.. math::``), keyed by class name,
or by its stem: the name without its Binary / Multiclass / Multilabel prefix, so that
``MulticlassAccuracy`` and ``BinaryAccuracy`` share Accuracy's. Counts TP, FP, TN, FN are per
class (per label), pooled or averaged as the metric's ``average`` says. Every class has one
(tests/test_docs_catalogue.py holds it): a wrapper's is written in terms of the metric it wraps,
a model-based score's in terms of the model's output.
"""

from typing import Dict

FORMULAS: Dict[str, str] = {
    # ---- classification: from the confusion matrix ----
    "Accuracy": r"\text{Accuracy} = \frac{TP + TN}{TP + TN + FP + FN}",
    "MulticlassAccuracy": r"\text{micro: } \frac{1}{N}\sum_{i=1}^{N} [\hat y_i = y_i],"
    r"\qquad \text{per class } c\text{: } \frac{TP_c}{TP_c + FN_c}",
    "Precision": r"\text{Precision} = \frac{TP}{TP + FP}",
    "Recall": r"\text{Recall} = \frac{TP}{TP + FN}",
    "Specificity": r"\text{Specificity} = \frac{TN}{TN + FP}",
    "NegativePredictiveValue": r"\text{NPV} = \frac{TN}{TN + FN}",
    "F1Score": r"F_1 = \frac{2\,TP}{2\,TP + FP + FN}",
    "FBetaScore": r"F_\beta = \frac{(1 + \beta^2)\,TP}{(1 + \beta^2)\,TP + \beta^2 FN + FP}",
    "JaccardIndex": r"J = \frac{TP}{TP + FP + FN}",
    "Dice": r"\text{Dice} = \frac{2\,TP}{2\,TP + FP + FN}",
    "HammingDistance": r"\text{Hamming} = 1 - \frac{TP + TN}{TP + TN + FP + FN}",
    "StatScores": r"(TP,\ FP,\ TN,\ FN,\ TP + FN)",
    "ConfusionMatrix": r"C_{jk} = \#\{i : y_i = j,\ \hat y_i = k\}",
    "ExactMatch": r"\text{ExactMatch} = \frac{1}{N}\sum_{i=1}^{N} [\hat y_{i,\cdot} = y_{i,\cdot}]",
    "MatthewsCorrCoef": r"\text{MCC} = \frac{c\,s - \sum_k p_k t_k}"
    r"{\sqrt{(s^2 - \sum_k p_k^2)(s^2 - \sum_k t_k^2)}}"
    r"\quad (c: \text{correct},\ s: \text{samples},\ p_k, t_k: \text{predicted / true counts of } k)",
    "CohenKappa": r"\kappa = 1 - \frac{\sum_{jk} w_{jk} O_{jk}}{\sum_{jk} w_{jk} E_{jk}},"
    r"\quad E_{jk} = \frac{O_{j\cdot} O_{\cdot k}}{N}",
    "HingeLoss": r"\frac{1}{N}\sum_i \max(0,\ 1 - y_i \hat y_i)\quad (y_i \in \{-1, 1\};\ \text{squared: }"
    r" \max(\cdot)^2)",
    "CalibrationError": r"\text{ECE} = \sum_{b=1}^{B} \frac{n_b}{N}\,\lvert \text{acc}_b - \text{conf}_b \rvert"
    r"\quad (\text{l2: } \sqrt{\sum_b \tfrac{n_b}{N} (\text{acc}_b - \text{conf}_b)^2},\ \text{max: } \max_b)",
    # ---- classification: curves ----
    "AUROC": r"\text{AUROC} = \int_0^1 \text{TPR}\, d\,\text{FPR}\quad\text{(trapezoidal rule over the ROC curve)}",
    "AveragePrecision": r"\text{AP} = \sum_n (R_n - R_{n-1})\, P_n",
    "ROC": r"\text{TPR}(t) = \frac{TP(t)}{TP(t) + FN(t)},\quad \text{FPR}(t) = \frac{FP(t)}{FP(t) + TN(t)}",
    "PrecisionRecallCurve": r"P(t) = \frac{TP(t)}{TP(t) + FP(t)},\quad R(t) = \frac{TP(t)}{TP(t) + FN(t)}",
    "EER": r"\text{EER} = \text{FPR}(t^*) = 1 - \text{TPR}(t^*)\quad\text{where the two rates cross}",
    "RecallAtFixedPrecision": r"\max_t R(t)\ \text{ subject to } P(t) \ge p_{\min}",
    "PrecisionAtFixedRecall": r"\max_t P(t)\ \text{ subject to } R(t) \ge r_{\min}",
    "SensitivityAtSpecificity": r"\max_t \text{TPR}(t)\ \text{ subject to } 1 - \text{FPR}(t) \ge s_{\min}",
    "SpecificityAtSensitivity": r"\max_t (1 - \text{FPR}(t))\ \text{ subject to } \text{TPR}(t) \ge s_{\min}",
    "RankingLoss": r"\frac{1}{N}\sum_i \frac{\lvert\{(j, k) : y_{ij} = 1,\ y_{ik} = 0,\ \hat y_{ij} \le \hat"
    r" y_{ik}\}\rvert}"
    r"{\lvert Y_i \rvert\,(L - \lvert Y_i \rvert)}",
    "CoverageError": r"\frac{1}{N}\sum_i \max_{j : y_{ij} = 1} \text{rank}_i(j)",
    "RankingAveragePrecision": r"\frac{1}{N}\sum_i \frac{1}{\lvert Y_i\rvert}\sum_{j \in Y_i}"
    r"\frac{\lvert\{k \in Y_i : \text{rank}_i(k) \le \text{rank}_i(j)\}\rvert}{\text{rank}_i(j)}",
    # ---- regression ----
    "MeanSquaredError": r"\text{MSE} = \frac{1}{N}\sum_i (\hat y_i - y_i)^2\quad(\text{squared=False: }"
    r" \sqrt{\text{MSE}})",
    "MeanAbsoluteError": r"\text{MAE} = \frac{1}{N}\sum_i \lvert \hat y_i - y_i \rvert",
    "MeanAbsolutePercentageError": r"\text{MAPE} = \frac{1}{N}\sum_i"
    r"\frac{\lvert \hat y_i - y_i \rvert}{\max(\lvert y_i \rvert, \epsilon)}",
    "SymmetricMeanAbsolutePercentageError": r"\text{SMAPE} = \frac{2}{N}\sum_i"
    r"\frac{\lvert \hat y_i - y_i \rvert}{\max(\lvert y_i \rvert + \lvert \hat y_i \rvert, \epsilon)}",
    "WeightedMeanAbsolutePercentageError": r"\text{WMAPE} = \frac{\sum_i \lvert \hat y_i - y_i \rvert}{\sum_i"
    r" \lvert y_i \rvert}",
    "MeanSquaredLogError": r"\text{MSLE} = \frac{1}{N}\sum_i \bigl(\log(1 + \hat y_i) - \log(1 + y_i)\bigr)^2",
    "LogCoshError": r"\frac{1}{N}\sum_i \log\cosh(\hat y_i - y_i)",
    "MinkowskiDistance": r"D_p = \Bigl(\sum_i \lvert \hat y_i - y_i \rvert^p\Bigr)^{1/p}",
    "R2Score": r"R^2 = 1 - \frac{\sum_i (y_i - \hat y_i)^2}{\sum_i (y_i - \bar y)^2}"
    r"\quad(\text{adjusted: } 1 - (1 - R^2)\frac{N - 1}{N - k - 1})",
    "ExplainedVariance": r"\text{EV} = 1 - \frac{\operatorname{Var}(y - \hat y)}{\operatorname{Var}(y)}",
    "PearsonCorrCoef": r"r = \frac{\sum_i (\hat y_i - \bar{\hat y})(y_i - \bar y)}"
    r"{\sqrt{\sum_i (\hat y_i - \bar{\hat y})^2}\,\sqrt{\sum_i (y_i - \bar y)^2}}",
    "ConcordanceCorrCoef": r"\rho_c = \frac{2\, s_{\hat y y}}{s_{\hat y}^2 + s_y^2 + (\bar{\hat y} - \bar y)^2}",
    "SpearmanCorrCoef": r"\rho = r\bigl(\operatorname{rank}(\hat y), \operatorname{rank}(y)\bigr)"
    r"\quad\text{(Pearson's r of the ranks, ties at their mean rank)}",
    "KendallRankCorrCoef": r"\tau_b = \frac{n_c - n_d}{\sqrt{(n_0 - n_1)(n_0 - n_2)}}"
    r"\quad (n_c, n_d: \text{concordant, discordant pairs};\ n_1, n_2: \text{tied pairs})",
    "CosineSimilarity": r"\cos(\hat y_i, y_i) = \frac{\hat y_i \cdot y_i}{\lVert \hat y_i \rVert\,\lVert y_i \rVert}",
    "KLDivergence": r"D_{KL}(P \,\Vert\, Q) = \sum_j p_j \log\frac{p_j}{q_j}",
    "JensenShannonDivergence": r"\text{JS}(P, Q) = \tfrac12 D_{KL}(P \,\Vert\, M) + \tfrac12 D_{KL}(Q \,\Vert\, M),"
    r"\quad M = \tfrac12 (P + Q)",
    "TweedieDevianceScore": r"\frac{1}{N}\sum_i 2\Bigl(\frac{\max(y_i, 0)^{2-p}}{(1-p)(2-p)}"
    r"- \frac{y_i \hat y_i^{1-p}}{1-p} + \frac{\hat y_i^{2-p}}{2-p}\Bigr)",
    "RelativeSquaredError": r"\text{RSE} = \frac{\sum_i (\hat y_i - y_i)^2}{\sum_i (y_i - \bar y)^2}",
    "NormalizedRootMeanSquaredError": r"\text{NRMSE} = \frac{\sqrt{\frac{1}{N}\sum_i (\hat y_i - y_i)^2}}{d}"
    r"\quad (d: \text{mean, range, std or l2 norm of } y)",
    "CriticalSuccessIndex": r"\text{CSI} = \frac{TP}{TP + FN + FP}\quad\text{(values at or above the threshold)}",
    "ContinuousRankedProbabilityScore": r"\text{CRPS} = \frac{1}{N}\sum_i \Bigl(\frac{1}{M}\sum_m \lvert"
    r" x_{im} - y_i\rvert"
    r"- \frac{1}{2M^2}\sum_{m, m'} \lvert x_{im} - x_{im'}\rvert\Bigr)",
    # ---- aggregation ----
    "SumMetric": r"\sum_i x_i",
    "MeanMetric": r"\frac{\sum_i w_i x_i}{\sum_i w_i}",
    "AverageLoss": r"\frac{\sum_b n_b\,\ell_b}{\sum_b n_b}\quad (n_b: \text{batch size})",
    "MaxMetric": r"\max_i x_i",
    "MinMetric": r"\min_i x_i",
    "RunningMean": r"\frac{\sum_{\text{last } k \text{ updates}} x_i}{\#\{x_i\}}",
    "RunningSum": r"\sum_{\text{last } k \text{ updates}} x_i",
    # ---- clustering ----
    "MutualInfoScore": r"\text{MI}(U, V) = \sum_{ij} \frac{n_{ij}}{N}\log\frac{N\, n_{ij}}{a_i b_j}",
    "NormalizedMutualInfoScore": r"\text{NMI} = \frac{\text{MI}(U, V)}{\operatorname{mean}(H(U), H(V))}",
    "AdjustedMutualInfoScore": r"\text{AMI} = \frac{\text{MI} - E[\text{MI}]}{\operatorname{mean}(H(U), H(V))"
    r" - E[\text{MI}]}",
    "RandScore": r"\text{RI} = \frac{\text{agreeing pairs}}{\binom{N}{2}}",
    "AdjustedRandScore": r"\text{ARI} = \frac{\sum_{ij}\binom{n_{ij}}{2} - E}{\tfrac12\bigl(\sum_i \binom{a_i}{2}"
    r"+ \sum_j \binom{b_j}{2}\bigr) - E},\quad E = \frac{\sum_i \binom{a_i}{2}\sum_j \binom{b_j}{2}}{\binom{N}{2}}",
    "FowlkesMallowsIndex": r"\text{FMI} = \frac{TP}{\sqrt{(TP + FP)(TP + FN)}}\quad\text{(over pairs of samples)}",
    "HomogeneityScore": r"h = 1 - \frac{H(C \mid K)}{H(C)}",
    "CompletenessScore": r"c = 1 - \frac{H(K \mid C)}{H(K)}",
    "VMeasureScore": r"v = \frac{(1 + \beta)\, h\, c}{\beta\, h + c}",
    "CalinskiHarabaszScore": r"\text{CH} = \frac{\operatorname{tr}(B_k)}{\operatorname{tr}(W_k)}\cdot\frac{N"
    r" - k}{k - 1}",
    "DaviesBouldinScore": r"\text{DB} = \frac{1}{k}\sum_i \max_{j \ne i}\frac{s_i + s_j}{d(c_i, c_j)}",
    "DunnIndex": r"\text{DI} = \frac{\min_{i \ne j} d(c_i, c_j)}{\max_i \operatorname{diam}(C_i)}",
    # ---- nominal ----
    "CramersV": r"V = \sqrt{\frac{\chi^2 / N}{\min(r - 1, c - 1)}}",
    "TschuprowsT": r"T = \sqrt{\frac{\chi^2 / N}{\sqrt{(r - 1)(c - 1)}}}",
    "PearsonsContingencyCoefficient": r"C = \sqrt{\frac{\chi^2}{\chi^2 + N}}",
    "TheilsU": r"U(X \mid Y) = \frac{H(X) - H(X \mid Y)}{H(X)}",
    "FleissKappa": r"\kappa = \frac{\bar P - \bar P_e}{1 - \bar P_e}",
    # ---- retrieval: per query, then aggregated over queries ----
    "RetrievalMAP": r"\text{AP}_q = \frac{1}{\lvert R_q\rvert}\sum_{k : d_k \in R_q} P_q@k",
    "RetrievalMRR": r"\text{RR}_q = \frac{1}{\operatorname{rank}_q(\text{first relevant})}",
    "RetrievalPrecision": r"P_q@k = \frac{\lvert R_q \cap \text{top}_k\rvert}{k}",
    "RetrievalRecall": r"R_q@k = \frac{\lvert R_q \cap \text{top}_k\rvert}{\lvert R_q\rvert}",
    "RetrievalFallOut": r"\text{FO}_q@k = \frac{\lvert \bar R_q \cap \text{top}_k\rvert}{\lvert \bar R_q\rvert}",
    "RetrievalHitRate": r"\text{HR}_q@k = [\,R_q \cap \text{top}_k \ne \emptyset\,]",
    "RetrievalRPrecision": r"\text{RP}_q = P_q@\lvert R_q\rvert",
    "RetrievalNormalizedDCG": r"\text{nDCG}_q@k = \frac{\sum_{i \le k} g_i / \log_2(i + 1)}{\text{ideal DCG}_q@k}",
    # ---- image ----
    "PeakSignalNoiseRatio": r"\text{PSNR} = 10 \log_{10}\frac{\text{data_range}^2}{\text{MSE}}",
    "StructuralSimilarityIndexMeasure": r"\text{SSIM}(x, y) = \frac{(2\mu_x\mu_y + C_1)(2\sigma_{xy} + C_2)}"
    r"{(\mu_x^2 + \mu_y^2 + C_1)(\sigma_x^2 + \sigma_y^2 + C_2)}",
    "UniversalImageQualityIndex": r"Q = \frac{4\sigma_{xy}\mu_x\mu_y}{(\sigma_x^2 + \sigma_y^2)(\mu_x^2 + \mu_y^2)}",
    "TotalVariation": r"\text{TV}(x) = \sum_{ij} \lvert x_{i+1,j} - x_{ij}\rvert + \lvert x_{i,j+1} - x_{ij}\rvert",
    "SpectralAngleMapper": r"\text{SAM} = \arccos\frac{\hat x \cdot x}{\lVert \hat x\rVert\,\lVert"
    r" x\rVert}\quad\text{(per pixel)}",
    "ErrorRelativeGlobalDimensionlessSynthesis": r"\text{ERGAS} = 100\,\frac{h}{l}\sqrt{\frac{1}{B}"
    r"\sum_b \frac{\text{RMSE}_b^2}{\mu_b^2}}",
    "FrechetInceptionDistance": r"\text{FID} = \lVert \mu_r - \mu_g\rVert^2"
    r"+ \operatorname{tr}\bigl(\Sigma_r + \Sigma_g - 2(\Sigma_r\Sigma_g)^{1/2}\bigr)",
    "InceptionScore": r"\text{IS} = \exp\bigl(E_x\, D_{KL}(p(y \mid x) \,\Vert\, p(y))\bigr)",
    # ---- text ----
    "WordErrorRate": r"\text{WER} = \frac{S + D + I}{N}\quad (N: \text{reference words})",
    "CharErrorRate": r"\text{CER} = \frac{S + D + I}{N}\quad (N: \text{reference characters})",
    "MatchErrorRate": r"\text{MER} = \frac{S + D + I}{H + S + D + I}",
    "WordInfoPreserved": r"\text{WIP} = \frac{H}{N_{\text{ref}}}\cdot\frac{H}{N_{\text{pred}}}",
    "WordInfoLost": r"\text{WIL} = 1 - \frac{H}{N_{\text{ref}}}\cdot\frac{H}{N_{\text{pred}}}",
    "BLEUScore": r"\text{BLEU} = \text{BP}\cdot\exp\Bigl(\sum_{n=1}^{4} w_n \log p_n\Bigr),"
    r"\quad \text{BP} = \min(1, e^{1 - r/c})",
    "SacreBLEUScore": r"\text{BLEU} = \text{BP}\cdot\exp\Bigl(\sum_{n=1}^{4} w_n \log p_n\Bigr),"
    r"\quad \text{BP} = \min(1, e^{1 - r/c})",
    "Perplexity": r"\text{PPL} = \exp\Bigl(-\frac{1}{T}\sum_t \log p(x_t)\Bigr)",
    "TranslationEditRate": r"\text{TER} = \frac{\text{edits}}{\text{average reference words}}",
    # ---- audio ----
    "SignalNoiseRatio": r"\text{SNR} = 10\log_{10}\frac{\lVert s\rVert^2}{\lVert s - \hat s\rVert^2}",
    "ScaleInvariantSignalNoiseRatio": r"\text{SI-SNR} = 10\log_{10}\frac{\lVert \alpha s\rVert^2}"
    r"{\lVert \alpha s - \hat s\rVert^2},\quad \alpha = \frac{\hat s \cdot s}{\lVert s\rVert^2}"
    r"\ \text{(zero-mean signals)}",
    "ScaleInvariantSignalDistortionRatio": r"\text{SI-SDR} = 10\log_{10}\frac{\lVert \alpha s\rVert^2}"
    r"{\lVert \alpha s - \hat s\rVert^2},\quad \alpha = \frac{\hat s \cdot s}{\lVert s\rVert^2}",
    # ---- segmentation, detection, shape, multimodal ----
    "MeanIoU": r"\text{IoU}_c = \frac{\lvert P_c \cap T_c\rvert}{\lvert P_c \cup T_c\rvert}",
    "DiceScore": r"\text{Dice}_c = \frac{2\lvert P_c \cap T_c\rvert}{\lvert P_c\rvert + \lvert T_c\rvert}",
    "GeneralizedDiceScore": r"\text{GDS} = \frac{2\sum_c w_c \lvert P_c \cap T_c\rvert}{\sum_c w_c (\lvert"
    r" P_c\rvert + \lvert T_c\rvert)}",
    "HausdorffDistance": r"d_H(P, T) = \max\bigl(\sup_{p \in P}\inf_{t \in T} d(p, t),\ \sup_{t \in T}\inf_{p"
    r" \in P} d(p, t)\bigr)",
    "IntersectionOverUnion": r"\text{IoU}(A, B) = \frac{\lvert A \cap B\rvert}{\lvert A \cup B\rvert}",
    "GeneralizedIntersectionOverUnion": r"\text{GIoU} = \text{IoU} - \frac{\lvert C \setminus (A \cup"
    r" B)\rvert}{\lvert C\rvert}"
    r"\quad (C: \text{smallest enclosing box})",
    "DistanceIntersectionOverUnion": r"\text{DIoU} = \text{IoU} - \frac{\rho^2(a, b)}{c^2}",
    "PanopticQuality": r"\text{PQ} = \frac{\sum_{(p, g) \in TP} \text{IoU}(p, g)}{\lvert TP\rvert +"
    r" \tfrac12\lvert FP\rvert"
    r"+ \tfrac12\lvert FN\rvert}",
    "ProcrustesDisparity": r"d = \min_{R, s, t} \lVert X - (s\,Y R + t)\rVert_F^2\quad\text{(standardised clouds)}",
    "CLIPScore": r"\text{CLIPScore} = \max\bigl(100 \cos(E_I, E_C),\ 0\bigr)",
}


# ---- the classes whose value has no short closed form: what they compute, written out ----
# (wrappers: in terms of the wrapped metric m; model-based scores: in terms of the model's output)
MORE: Dict[str, str] = {
    # classification: fairness and the log-scaled AUC
    "Fairness": r"\text{DP} = \frac{\min_g \text{PR}_g}{\max_g \text{PR}_g},\quad"
    r"\text{EO} = \frac{\min_g \text{TPR}_g}{\max_g \text{TPR}_g}"
    r"\quad (\text{PR}_g = \tfrac{TP_g + FP_g}{n_g},\ \text{TPR}_g = \tfrac{TP_g}{TP_g + FN_g})",
    "GroupStatRates": r"r_g = \frac{(TP_g,\ FP_g,\ TN_g,\ FN_g)}{TP_g + FP_g + TN_g + FN_g}\quad\text{per group } g",
    "LogAUC": r"\text{LogAUC} = \frac{1}{\log_{10} b - \log_{10} a}\int_{\log_{10} a}^{\log_{10} b}"
    r"\text{TPR}\bigl(10^u\bigr)\, du\quad ((a, b) = \text{fpr_range})",
    # aggregation
    "CatMetric": r"[x_1, x_2, \dots, x_N]\quad\text{(every value, in order)}",
    "BaseAggregator": r"s_0 = \text{default_value},\quad s_i = \operatorname{fn}(s_{i-1}, x_i)",
    # wrappers
    "BinaryTargetTransformer": r"m\bigl(\hat y,\ [\,y > \tau\,]\bigr)\quad (\tau: \text{threshold})",
    "BootStrapper": r"v_b = m\text{ on copy } b \text{ (sample } i \text{ counted } w_{ib} \sim"
    r" \text{Poisson}(1) \text{ times)},"
    r"\quad \bar v = \frac{1}{B}\sum_b v_b,\quad s = \sqrt{\frac{1}{B - 1}\sum_b (v_b - \bar v)^2}",
    "ClasswiseWrapper": r"\{\text{label}_c : m(\hat y, y)_c\}_{c = 1}^{C}",
    "FeatureShare": r"f = \phi(x)\ \text{computed once},\quad m_j(f)\ \text{for every member } j",
    "LambdaInputTransformer": r"m\bigl(g(\hat y),\ h(y)\bigr)\quad (g, h: \text{the given transforms})",
    "MetricInputTransformer": r"m\bigl(g(\hat y),\ h(y)\bigr)\quad (g, h: \text{the subclass's transforms})",
    "MetricTracker": r"v_t = m \text{ over step } t,\quad \text{best} = \max_t v_t\ \ (\min_t v_t"
    r" \text{ where lower is better})",
    "MinMaxMetric": r"\text{raw} = v_T,\quad \max_{t \le T} v_t,\quad \min_{t \le T} v_t"
    r"\quad (v_t: \text{the value at the } t\text{-th compute})",
    "MultioutputWrapper": r"\bigl[m(\hat y_{\cdot 1}, y_{\cdot 1}),\ \dots,\ m(\hat y_{\cdot K}, y_{\cdot K})\bigr]",
    "MultitaskWrapper": r"\{t : m_t(\hat y^{(t)}, y^{(t)})\}_{t \in \text{tasks}}",
    "Running": r"m\bigl(\text{batches } T - k + 1, \dots, T\bigr)\quad (k: \text{window})",
    # detection
    "CompleteIntersectionOverUnion": r"\text{CIoU} = \text{IoU} - \frac{\rho^2(a, b)}{c^2} - \alpha v,"
    r"\quad v = \frac{4}{\pi^2}\Bigl(\arctan\frac{w_b}{h_b} - \arctan\frac{w_a}{h_a}\Bigr)^2,"
    r"\quad \alpha = \frac{v}{1 - \text{IoU} + v}",
    "MeanAveragePrecision": r"\text{mAP} = \frac{1}{\lvert K\rvert\,\lvert T\rvert}\sum_{k \in K}\sum_{t \in T}"
    r"\text{AP}_k(t),\quad \text{AP} = \frac{1}{101}\sum_{r \in \{0, 0.01, \dots, 1\}} \max_{r' \ge r} P(r')"
    r"\quad (K: \text{classes},\ T: \text{IoU thresholds})",
    "ModifiedPanopticQuality": r"\text{PQ}^\dagger_c = \text{PQ}_c\ \text{(things)},\quad"
    r"\frac{\sum_{(p, g):\, p \cap g \ne \emptyset} \text{IoU}(p, g)}{\lvert \{g\}\rvert}\ \text{(stuff)},"
    r"\quad \text{averaged over the categories present}",
    # retrieval
    "RetrievalAUROC": r"\text{AUROC}_q = \int_0^1 \text{TPR}_q\, d\,\text{FPR}_q\quad"
    r"\text{(over the query's top } k \text{ documents)}",
    "RetrievalPrecisionRecallCurve": r"\bigl(P_q@k,\ R_q@k\bigr)_{k = 1}^{K},\quad P_q@k = \frac{\lvert R_q \cap"
    r" \text{top}_k\rvert}{k},\ R_q@k = \frac{\lvert R_q \cap \text{top}_k\rvert}{\lvert R_q\rvert}",
    "RetrievalRecallAtFixedPrecision": r"\max_k \overline{R@k}\ \text{ subject to } \overline{P@k} \ge p_{\min}"
    r"\quad (\overline{\cdot}: \text{mean over queries})",
    # text
    "BERTScore": r"P = \frac{1}{\lvert \hat x\rvert}\sum_{\hat x_j \in \hat x}\max_{x_i \in x}"
    r"\cos(x_i, \hat x_j),\quad R = \frac{1}{\lvert x\rvert}\sum_{x_i \in x}\max_{\hat x_j \in \hat x}"
    r"\cos(x_i, \hat x_j),\quad F = \frac{2PR}{P + R}",
    "CHRFScore": r"\text{chrF}_\beta = (1 + \beta^2)\frac{\text{chrP}\cdot\text{chrR}}"
    r"{\beta^2\,\text{chrP} + \text{chrR}}\quad\text{(character and word n-gram precision and recall)}",
    "EditDistance": r"d(a, b) = \min\ \#\text{insertions} + \#\text{deletions} + c_s\,\#\text{substitutions}"
    r"\quad\text{turning } a \text{ into } b",
    "ExtendedEditDistance": r"\text{EED} = \min\Bigl(1,\ \frac{e + \alpha\, j}{\lvert r\rvert + \rho\, v}\Bigr)"
    r"\quad (e: \text{edits},\ j: \text{jumps},\ v: \text{characters visited more than once})",
    "InfoLM": r"\text{InfoLM}(\hat x, x) = I\bigl(\bar p_{\hat x},\ \bar p_x\bigr)\quad (\bar p: \text{the masked"
    r" LM's mean token distribution},\ I: \text{information_measure})",
    "ROUGEScore": r"P_n = \frac{\lvert G_n(\hat x) \cap G_n(x)\rvert}{\lvert G_n(\hat x)\rvert},\ "
    r"R_n = \frac{\lvert G_n(\hat x) \cap G_n(x)\rvert}{\lvert G_n(x)\rvert},\ F_n = \frac{2 P_n R_n}{P_n + R_n}"
    r"\quad (G_n: n\text{-grams; rougeL: the longest common subsequence})",
    "SQuAD": r"\text{EM} = \frac{100}{N}\sum_i \max_{a \in A_i} [\hat a_i = a],\quad"
    r"\text{F1} = \frac{100}{N}\sum_i \max_{a \in A_i} \frac{2\,P(\hat a_i, a)\,R(\hat a_i, a)}"
    r"{P(\hat a_i, a) + R(\hat a_i, a)}\quad\text{(normalised tokens)}",
    # image
    "DeepImageStructureAndTextureSimilarity": r"D = 1 - \sum_{i, j}\bigl(\alpha_{ij}\,"
    r"\tfrac{2\mu_x\mu_y + c_1}{\mu_x^2 + \mu_y^2 + c_1} + \beta_{ij}\,\tfrac{2\sigma_{xy} + c_2}{\sigma_x^2 +"
    r" \sigma_y^2 + c_2}\bigr)\quad\text{(channel } j \text{ of stage } i\text{)}",
    "KernelInceptionDistance": r"\text{MMD}^2 = \frac{\sum_{i \ne j} k(x_i, x_j) + \sum_{i \ne j} k(y_i, y_j)}"
    r"{m(m - 1)} - \frac{2}{m^2}\sum_{i, j} k(x_i, y_j),\quad k(x, y) = (\gamma\, x^\top y + c)^d",
    "LearnedPerceptualImagePatchSimilarity": r"d(x, y) = \sum_l \frac{1}{H_l W_l}\sum_{h, w}"
    r"\bigl\lVert w_l \odot \bigl(\hat\phi_l(x)_{hw} - \hat\phi_l(y)_{hw}\bigr)\bigr\rVert_2^2",
    "MemorizationInformedFrechetInceptionDistance": r"\text{MiFID} = \frac{\text{FID}}{d},\quad"
    r" d = \frac{1}{N_r}\sum_{r} \min_{g}\bigl(1 - \lvert\cos(f_r, f_g)\rvert\bigr)\ \text{if below }"
    r" \epsilon,\ \text{else } 1",
    "MultiScaleStructuralSimilarityIndexMeasure": r"\text{MS-SSIM} = l_M(x, y)^{\beta_M}\prod_{j = 1}^{M}"
    r" cs_j(x, y)^{\beta_j}",
    "PeakSignalNoiseRatioWithBlockedEffect": r"\text{PSNR-B} = 10 \log_{10}\frac{\text{data_range}^2}"
    r"{\text{MSE} + \text{BEF}}",
    "PerceptualPathLength": r"\text{PPL} = E_{z_1, z_2}\Bigl[\frac{1}{\epsilon^2}\,"
    r"d\bigl(G(z_1),\ G(z_1 + \epsilon\,(z_2 - z_1))\bigr)\Bigr]",
    "QualityWithNoReference": r"\text{QNR} = (1 - D_\lambda)^\alpha\,(1 - D_s)^\beta",
    "RelativeAverageSpectralError": r"\text{RASE} = \frac{100}{\mu}\sqrt{\frac{1}{C}\sum_c \text{RMSE}_c^2}"
    r"\quad (\mu: \text{mean of the target})",
    "RootMeanSquaredErrorUsingSlidingWindow": r"\frac{1}{N}\sum_n \operatorname{mean}_p"
    r" \sqrt{\operatorname{mean}_{w(p)} (\hat x_n - x_n)^2}\quad (w(p): \text{the window at } p)",
    "SpatialCorrelationCoefficient": r"\text{SCC} = \operatorname{mean}_p \frac{\sigma_{\hat x' x'}(p)}"
    r"{\sigma_{\hat x'}(p)\,\sigma_{x'}(p)},\quad x' = h * x\ \ (h: \text{high-pass filter})",
    "SpatialDistortionIndex": r"D_s = \Bigl(\frac{1}{L}\sum_{l} \bigl\lvert Q(\hat x_l, P) - Q(\tilde x_l,"
    r" \tilde P)\bigr\rvert^q\Bigr)^{1/q}\quad (Q: \text{UQI},\ \tilde{\cdot}: \text{low resolution})",
    "SpectralDistortionIndex": r"D_\lambda = \Bigl(\frac{1}{L(L - 1)}\sum_{l \ne r} \bigl\lvert Q(\hat x_l,"
    r" \hat x_r) - Q(x_l, x_r)\bigr\rvert^p\Bigr)^{1/p}\quad (Q: \text{UQI})",
    "VisualInformationFidelity": r"\text{VIF} = \frac{\sum_j \log_2\bigl(1 + g_j^2 \sigma_{x,j}^2 /"
    r" (\sigma_{v,j}^2 + \sigma_n^2)\bigr)}{\sum_j \log_2\bigl(1 + \sigma_{x,j}^2 / \sigma_n^2\bigr)}",
    # clustering, multimodal
    "ClusterAccuracy": r"\max_{\pi} \frac{1}{N}\sum_i [\,\pi(\hat y_i) = y_i\,]\quad (\pi: \text{one-to-one map"
    r" of clusters to classes})",
    "CLIPImageQualityAssessment": r"p = \frac{e^{s \cos(E_I, E_{+})}}{e^{s \cos(E_I, E_{+})} + e^{s \cos(E_I,"
    r" E_{-})}}\quad (E_\pm: \text{the prompt pair},\ s: \text{CLIP's logit scale})",
    "LipVertexError": r"\text{LVE} = \frac{1}{T}\sum_t \max_{v \in \text{lips}} \lVert \hat x_{tv} -"
    r" x_{tv}\rVert_2^2",
    # audio, video
    "ComplexScaleInvariantSignalNoiseRatio": r"\text{C-SI-SNR} = \text{SI-SDR}\bigl(\operatorname{vec}(\Re \hat S,"
    r" \Im \hat S),\ \operatorname{vec}(\Re S, \Im S)\bigr)",
    "DeepNoiseSuppressionMeanOpinionScore": r"\frac{1}{U}\sum_u f_\theta(\hat s_u) \in \mathbb{R}^4\quad"
    r"(f_\theta: \text{the DNSMOS networks' P.808, SIG, BAK, OVRL})",
    "NonIntrusiveSpeechQualityAssessment": r"\frac{1}{U}\sum_u f_\theta(\hat s_u) \in \mathbb{R}^5\quad"
    r"(f_\theta: \text{the NISQA network})",
    "PerceptualEvaluationSpeechQuality": r"\frac{1}{U}\sum_u \text{PESQ}(\hat s_u, s_u)\quad"
    r"(\text{ITU-T P.862, from } -0.5 \text{ to } 4.5)",
    "PermutationInvariantTraining": r"\frac{1}{B}\sum_b \max_{\pi}\frac{1}{K}\sum_{k = 1}^{K}"
    r" m\bigl(\hat s_{b, \pi(k)}, s_{b, k}\bigr)\quad(\min \text{ with eval_func = min})",
    "ShortTimeObjectiveIntelligibility": r"\text{STOI} = \frac{1}{JM}\sum_{j, m}"
    r"\rho\bigl(\hat e_{j, m}, e_{j, m}\bigr)\quad (\rho: \text{correlation of short-time band envelopes})",
    "SignalDistortionRatio": r"\text{SDR} = 10\log_{10}\frac{\lVert P_s \hat s\rVert^2}{\lVert \hat s - P_s"
    r" \hat s\rVert^2}\quad (P_s: \text{projection onto the target's delayed copies})",
    "SourceAggregatedSignalDistortionRatio": r"\text{SA-SDR} = 10\log_{10}\frac{\sum_k \lVert s_k\rVert^2}"
    r"{\sum_k \lVert s_k - \hat s_k\rVert^2}",
    "SpeechReverberationModulationEnergyRatio": r"\text{SRMR} = \frac{\sum_{k = 1}^{4} \bar E_k}"
    r"{\sum_{k = 5}^{K^*} \bar E_k}\quad (\bar E_k: \text{energy in modulation band } k)",
    "VideoMultiMethodAssessmentFusion": r"\text{VMAF}_f = \operatorname{SVR}\bigl(\text{VIF}_{1..4},"
    r"\ \text{ADM},\ \text{motion}\bigr)_f\quad\text{(per frame } f\text{)}",
}
FORMULAS.update(MORE)


def formula(name: str) -> str:
    """The LaTeX formula of the class ``name`` (or of its stem); "" where none is kept."""
    if name in FORMULAS:
        return FORMULAS[name]
    for prefix in ("Binary", "Multiclass", "Multilabel"):
        if name.startswith(prefix) and name[len(prefix) :] in FORMULAS:
            return FORMULAS[name[len(prefix) :]]
    return ""
